#include <iostream>

#include "app/commands.h"
#include "checks/registry.h"
#include "db/conninfo.h"
#include "metrics/snapshot.h"
#include "poll/poller.h"
#include "report/once_report.h"

namespace seatwatch::app {

int OnceCommand(const config::Config& config, const std::string& version) {
  metrics::SnapshotStore store;
  // One pass, no slot: incremental entries run their full query.
  config::Config once = config;
  once.changes.enabled = false;
  poll::Poller poller(once, checks::BuildChecks(once), store, version);
  metrics::PollState state = poller.RunAllOnce();
  // The server the report's checks read: [checks] dsn when set.
  std::string dsn = db::MaskDsn(poll::LaneDsn(config, poll::Lane::kChecks));
  std::cout << report::FormatOnceReport(state, dsn);
  return report::OnceExitCode(state);
}

}  // namespace seatwatch::app
