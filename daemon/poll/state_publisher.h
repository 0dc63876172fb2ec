#pragma once

#include <cstddef>
#include <mutex>
#include <vector>

#include "metrics/poll_state.h"
#include "metrics/snapshot.h"
#include "poll/failover_tracker.h"

namespace seatwatch::poll {

// The hand-over point between the pollers of the lanes and the snapshot
// that /metrics serves: keeps each lane's last PollState and publishes one
// snapshot of all of them whenever a lane publishes. A scrape therefore sees
// every lane's last results, whichever lane polled last. Each published
// lane state's servers feed one FailoverTracker, whose count is the merged
// state's failovers_total. Thread-safe.
class StatePublisher {
 public:
  StatePublisher(metrics::SnapshotStore& store, std::size_t lanes);

  void Publish(std::size_t lane, metrics::PollState state);
  // From a lane's watchdog, while the lane's thread is stuck in a statement
  // that gets no answer: publishes that lane's last state as overdue (see
  // MarkOverdue) at once, so no stale "ok" is served meanwhile.
  void MarkOverdue(std::size_t lane);

 private:
  std::mutex mutex_;
  metrics::SnapshotStore& store_;
  std::vector<metrics::PollState> lanes_;
  FailoverTracker failovers_;
};

// A lane whose poll is overdue: database down, and every check that has run
// failed with none of its series (no invariant verdict, no metric), and no
// server facts, as if the poll had failed. Its counters stay. Pure.
void MarkOverdue(metrics::PollState& state);

// One PollState of several lanes'. Pure. Checks and invariant histories are
// concatenated in lane order, and so are the lanes' servers; version and poll interval come from the first
// lane that has them. Lanes without checks poll nothing and count for
// nothing. database_up: every lane with checks reached the database on its
// last poll. last_poll_unix and last_successful_poll_unix: the latest of
// any lane, so /readyz stays ready while a long poll runs in one lane and
// the other keeps polling, but not while any lane cannot reach the database.
metrics::PollState MergeLanes(const std::vector<metrics::PollState>& lanes);

}  // namespace seatwatch::poll
