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

changes::ChangeFeedOptions BookingFeedOptions(const std::string& dsn, const std::string& prefix,
                                              std::chrono::milliseconds reconnect_max_backoff) {
  changes::ChangeFeedOptions options;
  options.slot.dsn = dsn;
  options.slot.application_name = "seatwatch-test-changes";
  options.slot.statement_timeout = std::chrono::seconds(5);
  options.slot.create_timeout = std::chrono::seconds(2);
  options.slot.reconnect_max_backoff = reconnect_max_backoff;
  options.slot.slot_prefix = prefix;
  options.slot.publication = "seatwatch";
  options.tables = BookingTables();
  return options;
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
