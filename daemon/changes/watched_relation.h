#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "changes/pgoutput_messages.h"

namespace seatwatch::changes {

// A column whose old and new values provenance keeps (see SqlWords).
struct MonitoredColumn {
  std::string name;
  std::size_t column = 0;    // position in the relation's tuples
  bool in_identity = false;  // flagged as part of the replica identity
};

// One watched table a relation matches, and where its key column is.
struct WatchedKey {
  std::string table;       // the entry's name, as configured ("tickets")
  std::string key_column;  // "event_id"
  // Position of the key column in the relation's tuples; -1 when the
  // publication does not publish it (a column list without it).
  int column = -1;
  // The replica identity carries the key column (flagged as key, or REPLICA
  // IDENTITY FULL): an update without an old tuple kept its key, a delete's
  // old tuple holds it.
  bool in_identity = false;
  // The relation's columns the entries watching this table name in their
  // SQL, the key column left out, in the relation's order.
  std::vector<MonitoredColumn> monitored;
};

// What the decoder keeps per relation OID, made from its Relation message.
struct WatchedRelation {
  std::string display_name;  // "tickets", or "archive.tickets" outside public
  ReplicaIdentity replica_identity = ReplicaIdentity::kDefault;
  std::size_t column_count = 0;
  // The replica identity's columns (flagged as key), positions in the
  // tuples. They name one row when the identity is an index (USING INDEX,
  // or DEFAULT: the primary key); under FULL or NOTHING they do not, and
  // identified() is false.
  std::vector<std::size_t> identity;
  std::vector<std::string> identity_names;
  bool identified() const {
    return !identity.empty() && (replica_identity == ReplicaIdentity::kIndex ||
                                 replica_identity == ReplicaIdentity::kDefault);
  }
  std::vector<WatchedKey> watched;  // empty: a table nobody watches
};

// A configured table name matches a relation: a plain name a relation of
// that name in any schema, "schema.name" exactly that one.
bool TableNameMatches(std::string_view configured, std::string_view namespace_name,
                      std::string_view name);

// Resolves a Relation message against the watched tables (table -> key
// column) and the words their entries' SQL uses (table -> SqlWords). Pure.
WatchedRelation ResolveRelation(const RelationMessage& relation,
                                const std::map<std::string, std::string>& tables,
                                const std::map<std::string, std::set<std::string>>& words = {});

// "DEFAULT", "NOTHING", "FULL", "USING INDEX": for messages.
const char* ReplicaIdentityName(ReplicaIdentity identity);

}  // namespace seatwatch::changes
