#pragma once

#include <chrono>
#include <condition_variable>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "checks/check.h"
#include "config/config.h"
#include "metrics/snapshot.h"
#include "poll/lane_progress.h"
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

  // The lanes' heartbeats and first publishes (see LaneProgress); its
  // stamp period and callback are set before Start(). Shared, so that a
  // reader (the watchdog pinger) may outlive the group.
  std::shared_ptr<LaneProgress> progress() const { return progress_; }

  void Start();
  // Hands each lane its share of the new checks; each applies it between
  // its checks.
  void Reload(const config::Config& config, std::vector<std::unique_ptr<checks::Check>> checks);
  // Asks every lane to stop: each cancels the statement in flight (see
  // Poller::Stop) and starts no further check. Does not wait; Wait() does.
  void Stop();
  void Wait();
  // Waits at most `timeout` for every lane's thread to end; true if they
  // all did (and are joined). A lane can outlast it only inside a connect
  // attempt, which libpq bounds by connect_timeout alone.
  bool WaitFor(std::chrono::milliseconds timeout);

 private:
  static constexpr Lane kLanes[] = {Lane::kChecks, Lane::kLocks};
  std::shared_ptr<StatePublisher> publisher_;
  std::shared_ptr<LaneProgress> progress_;
  std::vector<std::unique_ptr<Poller>> pollers_;  // in the order of kLanes
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable finished_;
  std::size_t running_ = 0;
};

}  // namespace seatwatch::poll
