#include "poll/state_publisher.h"

#include <algorithm>
#include <memory>

#include "metrics/snapshot_builder.h"

namespace seatwatch::poll {

namespace {

// The snapshot keeps the merged state itself (for the status page).
std::shared_ptr<const metrics::Snapshot> SnapshotOf(const std::vector<metrics::PollState>& lanes,
                                                    std::uint64_t failovers) {
  auto merged =
      std::make_shared<metrics::PollState>(lanes.size() == 1 ? lanes[0] : MergeLanes(lanes));
  merged->failovers_total = failovers;
  return std::make_shared<const metrics::Snapshot>(metrics::BuildSnapshot(std::move(merged)));
}

}  // namespace

StatePublisher::StatePublisher(metrics::SnapshotStore& store, std::size_t lanes)
    : store_(store), lanes_(lanes) {}

void StatePublisher::Publish(std::size_t lane, metrics::PollState state) {
  // Built under the lock: two lanes publishing at once must not store their
  // snapshots in the opposite order and hide the later one's results.
  std::lock_guard<std::mutex> lock(mutex_);
  lanes_.at(lane) = std::move(state);
  for (const auto& server : lanes_[lane].servers) failovers_.Observe(lane, server);
  store_.Publish(SnapshotOf(lanes_, failovers_.count()));
}

void StatePublisher::MarkOverdue(std::size_t lane) {
  std::lock_guard<std::mutex> lock(mutex_);
  poll::MarkOverdue(lanes_.at(lane));
  store_.Publish(SnapshotOf(lanes_, failovers_.count()));
}

void MarkOverdue(metrics::PollState& state) {
  state.database_up = false;
  // Whatever the lane last learnt of its server may no longer hold.
  state.servers.clear();
  for (auto& check : state.checks) {
    if (!check.has_run) continue;
    check.success = false;
    check.last_error = "overdue: no answer from the database in time";
    check.last_reason = "connection";
    check.output.reset();
    check.rendered.reset();
  }
}

metrics::PollState MergeLanes(const std::vector<metrics::PollState>& lanes) {
  metrics::PollState merged;
  bool any = false;
  bool up = true;
  for (const auto& lane : lanes) {
    if (merged.version.empty()) merged.version = lane.version;
    if (merged.poll_interval_seconds <= 0) merged.poll_interval_seconds = lane.poll_interval_seconds;
    merged.checks.insert(merged.checks.end(), lane.checks.begin(), lane.checks.end());
    merged.history.insert(lane.history.begin(), lane.history.end());
    merged.lifecycles.insert(merged.lifecycles.end(), lane.lifecycles.begin(),
                             lane.lifecycles.end());
    merged.changes_metrics += lane.changes_metrics;
    merged.servers.insert(merged.servers.end(), lane.servers.begin(), lane.servers.end());
    if (lane.checks.empty()) continue;
    any = true;
    up = up && lane.database_up;
    merged.last_poll_unix = std::max(merged.last_poll_unix, lane.last_poll_unix);
    merged.last_successful_poll_unix =
        std::max(merged.last_successful_poll_unix, lane.last_successful_poll_unix);
  }
  merged.database_up = any && up;
  return merged;
}

}  // namespace seatwatch::poll
