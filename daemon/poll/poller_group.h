#pragma once

#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "checks/check.h"
#include "config/config.h"
#include "metrics/snapshot.h"
#include "poll/poller.h"
#include "poll/state_publisher.h"

namespace seatwatch::poll {

// The daemon's pollers: one per lane (see lane.h), each on its own thread
// with its own session, all publishing into one snapshot. A lane without
// checks (the locks lane with [locks] disabled) sleeps and never connects.
// Start/Reload/Stop/Wait from one controlling thread.
class PollerGroup {
 public:
  PollerGroup(const config::Config& config, std::vector<std::unique_ptr<checks::Check>> checks,
              metrics::SnapshotStore& store, const std::string& version);
  ~PollerGroup();
  PollerGroup(const PollerGroup&) = delete;
  PollerGroup& operator=(const PollerGroup&) = delete;

  void Start();
  // Hands each lane its share of the new checks; each applies it between
  // its checks.
  void Reload(const config::Config& config, std::vector<std::unique_ptr<checks::Check>> checks);
  // Asks every lane to stop: each finishes the statement in flight and
  // starts no further check. Does not wait; Wait() does.
  void Stop();
  void Wait();

 private:
  static constexpr Lane kLanes[] = {Lane::kChecks, Lane::kLocks};
  std::shared_ptr<StatePublisher> publisher_;
  std::vector<std::unique_ptr<Poller>> pollers_;  // in the order of kLanes
  std::vector<std::thread> threads_;
};

}  // namespace seatwatch::poll
