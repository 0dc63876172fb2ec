#include <iostream>
#include <memory>
#include <vector>

#include "app/commands.h"
#include "checks/registry.h"
#include "db/conninfo.h"
#include "metrics/snapshot.h"
#include "poll/lane.h"
#include "poll/poller.h"
#include "poll/state_publisher.h"
#include "report/once_report.h"

namespace seatwatch::app {

int OnceCommand(const config::Config& config, const std::string& version) {
  // One pass, no slot: incremental entries run their full query.
  config::Config once = config;
  once.changes.enabled = false;
  // Each check on its own lane's server, with that lane's session settings,
  // as the daemon runs it: the locks check reads the primary even when
  // [checks] dsn is a standby, and one lane that cannot reach its server
  // does not keep the other from reporting.
  constexpr poll::Lane kLanes[] = {poll::Lane::kChecks, poll::Lane::kLocks};
  metrics::SnapshotStore store;
  auto publisher = std::make_shared<poll::StatePublisher>(store, std::size(kLanes));
  std::vector<std::unique_ptr<checks::Check>> all = checks::BuildChecks(once);
  std::vector<metrics::PollState> states;
  std::vector<report::OnceLane> lanes;
  for (std::size_t slot = 0; slot < std::size(kLanes); ++slot) {
    auto lane_checks = poll::TakeLane(all, kLanes[slot]);
    if (lane_checks.empty()) continue;
    poll::Poller poller(once, std::move(lane_checks), kLanes[slot], publisher, slot, version);
    states.push_back(poller.RunAllOnce());
    lanes.push_back({poll::LaneName(kLanes[slot]),
                     db::MaskDsn(poll::LaneDsn(config, kLanes[slot])), states.back().database_up});
  }
  if (lanes.empty()) {
    lanes.push_back({poll::LaneName(poll::Lane::kChecks),
                     db::MaskDsn(poll::LaneDsn(config, poll::Lane::kChecks)), false});
  }
  metrics::PollState state = poll::MergeLanes(states);
  std::cout << report::FormatOnceReport(state, lanes);
  return report::OnceExitCode(state);
}

}  // namespace seatwatch::app
