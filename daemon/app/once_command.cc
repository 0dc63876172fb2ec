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
  std::cout << report::FormatOnceReport(state, db::MaskDsn(config.database.dsn));
  return report::OnceExitCode(state);
}

}  // namespace seatwatch::app
