#include "support/change_feed_fixtures.h"

namespace seatwatch::testing {

std::map<std::string, std::string> BookingTables() {
  return {{"seats", "event_id"}, {"tickets", "event_id"}, {"payments", "event_id"}};
}

config::Config IncrementalConfig(const std::string& dsn) {
  config::Config config;
  config.changes.enabled = true;
  config.changes.dsn = dsn;
  config::QueryConfig entry;
  entry.name = "booking";
  entry.key = "event_id";
  entry.tables = BookingTables();
  entry.scoped_sql = "SELECT 1";
  config.queries.push_back(entry);
  return config;
}

std::set<std::string> KeysOf(const changes::ChangeBatch& batch, const std::string& table) {
  std::set<std::string> keys;
  for (const auto& tx : batch.transactions) {
    auto it = tx.keys.find(table);
    if (it != tx.keys.end()) keys.insert(it->second.begin(), it->second.end());
  }
  return keys;
}

}  // namespace seatwatch::testing
