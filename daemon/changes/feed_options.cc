#include "changes/feed_options.h"

#include <stdexcept>

#include "changes/sql_words.h"
#include "config/config.h"

namespace seatwatch::changes {

ChangeFeedOptions FeedOptionsOf(const config::Config& config) {
  ChangeFeedOptions options;
  SlotSessionOptions& slot = options.slot;
  slot.dsn = config.ChangesDsn();
  slot.application_name = config.database.application_name + "-changes";
  slot.connect_timeout = config.database.connect_timeout;
  slot.statement_timeout = config.changes.statement_timeout;
  slot.sender_timeout = SenderTimeoutFor(slot.statement_timeout);
  slot.lock_timeout = config.database.lock_timeout;
  slot.create_timeout = config.changes.create_timeout;
  slot.reconnect_max_backoff = config.database.reconnect_max_backoff;
  slot.slot_prefix = config.changes.slot_prefix;
  slot.publication = config.changes.publication;
  slot.max_changes = config.changes.max_changes;
  for (const auto& entry : config.queries) {
    if (!entry.incremental()) continue;
    for (const auto& [table, column] : entry.tables) {
      auto [it, added] = options.tables.emplace(table, column);
      if (!added && it->second != column) {
        throw std::invalid_argument("table " + table + " has key column " + it->second +
                                    " in one incremental entry and " + column + " in " +
                                    entry.name);
      }
    }
  }
  options.monitored_words = MonitoredWords(config);
  return options;
}

}  // namespace seatwatch::changes
