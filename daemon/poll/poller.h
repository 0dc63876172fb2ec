#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "checks/check.h"
#include "config/config.h"
#include "db/session.h"
#include "metrics/poll_state.h"
#include "metrics/snapshot.h"
#include "poll/scheduled_check.h"

namespace seatwatch::poll {

// The loop that runs checks when they are due and publishes a snapshot after
// every poll. Run() is the body of the one poller thread, which alone touches
// the session and the checks; Stop() and Reload() may be called from any
// thread and take effect between polls, never in the middle of a statement.
class Poller {
 public:
  Poller(config::Config config, std::vector<std::unique_ptr<checks::Check>> checks,
         metrics::SnapshotStore& store, std::string version);
  ~Poller();

  void Run();
  void Stop();
  // Swaps in a new config and checks; a check keeping its name keeps its
  // counters and history.
  void Reload(config::Config config, std::vector<std::unique_ptr<checks::Check>> checks);

  // For --once: one connection attempt, every check run now. Returns the
  // state the report is printed from.
  metrics::PollState RunAllOnce();

  const metrics::PollState& state() const { return state_; }

 private:
  void PollDue(bool force_all);
  void ApplyPendingReload();
  void Publish();
  void UpdateHistory();
  void RebuildState();
  Clock::time_point NextDue() const;
  std::unique_ptr<db::Session> MakeSession() const;

  config::Config config_;
  std::vector<ScheduledCheck> checks_;
  metrics::SnapshotStore& store_;
  std::unique_ptr<db::Session> session_;
  metrics::PollState state_;

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  struct PendingReload {
    config::Config config;
    std::vector<std::unique_ptr<checks::Check>> checks;
  };
  std::unique_ptr<PendingReload> pending_;
};

}  // namespace seatwatch::poll
