#include "locks/hot_row.h"

#include <pqxx/except>

#include "db/savepoint.h"
#include "locks/lock_wait_reader.h"
#include "util/log.h"

namespace seatwatch::locks {

namespace {

constexpr std::chrono::minutes kRetryMissingTables{1};
// A table dropped and created again gets a new OID.
constexpr std::chrono::minutes kRefreshTables{10};

}  // namespace

HotRowResolver::HotRowResolver(std::vector<std::string> tables) : names_(std::move(tables)) {}

void HotRowResolver::Refresh(pqxx::transaction_base& tx,
                             std::chrono::steady_clock::time_point now) {
  if (names_.empty()) return;
  bool complete = tables_.size() >= names_.size();
  auto every = complete ? kRefreshTables : kRetryMissingTables;
  if (looked_up_ && now - last_lookup_ < every) return;
  looked_up_ = true;
  last_lookup_ = now;
  std::map<std::uint32_t, TableRow> found;
  for (auto& table : ResolveTables(tx, names_)) found[table.oid] = std::move(table);
  // Forget the key columns of OIDs that are gone.
  for (auto it = keys_.begin(); it != keys_.end();) {
    it = found.count(it->first) ? std::next(it) : keys_.erase(it);
  }
  tables_ = std::move(found);
}

std::optional<std::string> HotRowResolver::Resolve(pqxx::transaction_base& tx,
                                                   std::uint32_t relation, std::int64_t page,
                                                   std::int64_t tuple) {
  auto table = tables_.find(relation);
  if (table == tables_.end()) return std::nullopt;
  // A savepoint: a lookup that fails (the table locked by DDL past
  // lock_timeout, dropped meanwhile) costs the row's name, not the poll.
  try {
    db::Savepoint savepoint(tx, "seatwatch_hot_row");
    auto key = keys_.find(relation);
    if (key == keys_.end()) key = keys_.emplace(relation, ReadPrimaryKey(tx, relation)).first;
    std::optional<std::string> shown;
    if (key->second.empty()) {
      shown = FormatRowCtid(table->second.name, page, tuple);
    } else if (auto values = ReadRowKey(tx, table->second, key->second, page, tuple)) {
      shown = FormatRowKey(table->second.name, key->second, *values);
    }
    savepoint.Release();
    return shown;
  } catch (const pqxx::broken_connection&) {
    throw;
  } catch (const std::exception& e) {
    // Once per distinct error, not every poll while a table stays locked.
    if (last_error_ != e.what()) {
      last_error_ = e.what();
      log::Warn("could not resolve a hot row",
                {{"check", "locks"}, {"relation", table->second.name}, {"error", e.what()}});
    }
    keys_.erase(relation);
    return std::nullopt;
  }
}

std::string FormatRowKey(const std::string& table, const std::vector<KeyColumn>& key,
                         const std::vector<std::optional<std::string>>& values) {
  std::string out = table + "(";
  for (size_t i = 0; i < key.size(); ++i) {
    if (i) out += ", ";
    std::optional<std::string> value = i < values.size() ? values[i] : std::nullopt;
    out += key[i].name + "=" + value.value_or("NULL");
  }
  return out + ")";
}

std::string FormatRowCtid(const std::string& table, std::int64_t page, std::int64_t tuple) {
  return table + "(ctid=(" + std::to_string(page) + "," + std::to_string(tuple) + "))";
}

}  // namespace seatwatch::locks
