#include "changes/feed_verdict.h"

#include <pqxx/connection>

#include "changes/feed_options.h"
#include "changes/publication_inspector.h"
#include "config/config.h"
#include "db/conninfo.h"

namespace seatwatch::changes {

std::string CheckFeed(const config::Config& config) {
  const std::string prefix = "incremental mode: ";
  if (!config.changes.enabled) return prefix + "off: [changes] enabled = false";
  ChangeFeedOptions options;
  try {
    options = FeedOptionsOf(config);
  } catch (const std::exception& e) {
    return prefix + "off: " + e.what();
  }
  if (options.tables.empty()) return prefix + "off: no [[invariant]] or [[metric]] is incremental";
  db::SessionSettings settings;
  settings.application_name = options.slot.application_name;
  settings.connect_timeout = options.slot.connect_timeout;
  settings.statement_timeout = options.slot.statement_timeout;
  settings.lock_timeout = options.slot.lock_timeout;
  std::unique_ptr<pqxx::connection> connection;
  try {
    connection =
        std::make_unique<pqxx::connection>(db::BuildConninfo(options.slot.dsn, settings));
  } catch (const std::exception& e) {
    std::string error = db::ScrubDsnSecrets(e.what(), options.slot.dsn);
    while (!error.empty() && error.back() == '\n') error.pop_back();
    return prefix + "off: the changes DSN " + db::MaskDsn(options.slot.dsn) +
           " is not reachable: " + error;
  }
  try {
    FeedVerdict verdict =
        InspectPublication(*connection, options.slot.publication, options.tables);
    return prefix + verdict.Describe();
  } catch (const std::exception& e) {
    return prefix + "off: cannot inspect the publication: " + e.what();
  }
}

}  // namespace seatwatch::changes
