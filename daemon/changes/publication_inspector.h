#pragma once

#include <map>
#include <string>
#include <vector>

#include <pqxx/connection>

namespace seatwatch::changes {

// Whether the server, the role and the publication let the change feed see
// every change of the watched tables, and what it cannot map to keys.
struct FeedVerdict {
  bool usable = false;
  std::string off_reason;  // why not usable: the first blocker found
  // Change kinds that arrive but cannot be mapped to keys: seeing one forces
  // a full pass ("deletes on tickets ... force a full pass").
  std::vector<std::string> unmappable;
  // Problems that are not the feed's but the database's (the replica
  // identity trap) or gaps only the backstop covers.
  std::vector<std::string> warnings;

  // "on" or "off: <why>", and one line per unmappable kind and warning:
  // what the log says once and what --check-config prints.
  std::string Describe() const;
};

// The off reason on a server in recovery (a streaming standby).
inline constexpr const char* kStandbyOffReason =
    "the server is a standby (in recovery): PostgreSQL 15 decodes changes only on the primary; "
    "point [changes] dsn (or [database] dsn) at the primary";

// Asks first whether the server is in recovery (then off: kStandbyOffReason),
// then reads wal_level, the role's REPLICATION attribute, the publication (its
// operations, its tables and their column lists) and each watched table's
// replica identity. `tables` is watched table -> key column; a plain name
// matches a relation of that name in any schema, "schema.name" exactly.
// Runs before the slot exists (an error on the slot's session would drop
// it); throws what the connection throws.
FeedVerdict InspectPublication(pqxx::connection& connection, const std::string& publication,
                               const std::map<std::string, std::string>& tables);

}  // namespace seatwatch::changes
