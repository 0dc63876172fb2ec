#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <pqxx/transaction_base>

#include "locks/lock_rows.h"

namespace seatwatch::locks {

// Names the row behind a tuple lock by its primary key, for the tables of
// [locks] resolve_rows only. Keeps the tables' OIDs and key columns between
// polls (a catalog lookup once, not every poll). Not thread-safe: owned by
// the locks check on the poller thread.
class HotRowResolver {
 public:
  explicit HotRowResolver(std::vector<std::string> tables);

  // Looks the configured tables up on the first call, then again every ten
  // minutes, or every minute while some of them do not exist.
  void Refresh(pqxx::transaction_base& tx, std::chrono::steady_clock::time_point now);

  // The configured tables that exist, by OID.
  const std::map<std::uint32_t, TableRow>& tables() const { return tables_; }

  // "seats(event_id=1, seat=A12)"; nullopt for a table not configured, a row
  // no longer there, or a failed lookup (logged; the poll goes on).
  std::optional<std::string> Resolve(pqxx::transaction_base& tx, std::uint32_t relation,
                                     std::int64_t page, std::int64_t tuple);

 private:
  std::vector<std::string> names_;
  std::map<std::uint32_t, TableRow> tables_;
  std::map<std::uint32_t, std::vector<KeyColumn>> keys_;
  std::string last_error_;
  bool looked_up_ = false;
  std::chrono::steady_clock::time_point last_lookup_{};
};

// The text a row is shown as: "seats(event_id=1, seat=A12)", or with its
// ctid, "seats(ctid=(4,2))", when its key is not known.
std::string FormatRowKey(const std::string& table, const std::vector<KeyColumn>& key,
                         const std::vector<std::optional<std::string>>& values);
std::string FormatRowCtid(const std::string& table, std::int64_t page, std::int64_t tuple);

}  // namespace seatwatch::locks
