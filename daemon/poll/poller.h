#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "checks/check.h"
#include "config/config.h"
#include "db/server_facts.h"
#include "metrics/poll_state.h"
#include "metrics/snapshot.h"
#include "metrics/violation_lifecycle.h"
#include "poll/feed_keeper.h"
#include "poll/lane.h"
#include "poll/lane_progress.h"
#include "poll/lane_session.h"
#include "poll/recheck_budget.h"
#include "poll/recovery_watch.h"
#include "poll/scheduled_check.h"
#include "poll/state_publisher.h"

namespace seatwatch::poll {

// The loop that runs checks when they are due and publishes a snapshot after
// every poll. Run() is the body of the poller's thread, which alone touches
// its session and its checks; Stop() and Reload() may be called from any
// thread. Stop() cancels the statement in flight (and drops the connection
// if the cancel is not answered at once) and starts no further check;
// Reload() takes effect between polls. The checks run on the lane's
// LaneSession, under its watchdog: a check that stops answering is dropped
// and the lane is published as overdue (seatwatch_up 0, none of its series)
// at that moment, even if its thread stays blocked.
//
// Incremental checks (Check::wants_changes): the checks lane's poller keeps
// the change feed (FeedKeeper). Before a poll in which such a check is due
// it drains the feed once and hands the batch to every check that wants
// changes; after the poll it tells the feed what the full passes cost.
// Stop() aborts the feed too.
//
// Before each poll's checks, and before the drain, the poller reads its
// server's facts (standby or primary, replay lag, identity: see
// db::ServerFactsReader) into PollState::servers. While the checks lane
// reads a standby it has no change feed: incremental checks run full
// passes; after a promotion it makes a new one.
class Poller {
 public:
  using ChangeFeedFactory = FeedKeeper::Factory;

  // One poller, every check, one session, publishing to `store` alone (--once,
  // tests).
  Poller(config::Config config, std::vector<std::unique_ptr<checks::Check>> checks,
         metrics::SnapshotStore& store, std::string version);
  // The poller of one lane of the daemon, with the session settings of that
  // lane, publishing its state as `slot` of `publisher`.
  Poller(config::Config config, std::vector<std::unique_ptr<checks::Check>> checks, Lane lane,
         std::shared_ptr<StatePublisher> publisher, std::size_t slot, std::string version);
  ~Poller();

  // Before Run(): how to make the change feed, made now (and again on a
  // reload that changes [changes] or the watched tables) while some check
  // wants changes. A factory that throws leaves the checks in full-pass
  // mode. Without one (--once, most tests) there is no feed.
  void SetChangeFeedFactory(ChangeFeedFactory factory);
  // Before Run(): where the loop stamps its heartbeat and marks its first
  // publish, as lane `slot` (see LaneProgress). Without one (--once, most
  // tests) nothing is stamped.
  void SetProgress(std::shared_ptr<LaneProgress> progress);

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
  void HoldBackExpensiveRechecks(const std::vector<ScheduledCheck*>& due,
                                 const std::vector<std::optional<metrics::IncrementalStatus>>& before,
                                 Clock::time_point start);
  void FollowRecovery(const db::ServerFacts& facts);
  void ApplyPendingReload();
  void Publish();
  void UpdateHistory();
  void ForgetUnconfigured();
  void RebuildState();
  Clock::time_point NextDue() const;
  void Stamp();

  config::Config config_;
  Lane lane_;
  std::vector<ScheduledCheck> checks_;
  std::shared_ptr<StatePublisher> publisher_;
  std::size_t slot_;
  LaneSession lane_session_;
  metrics::PollState state_;
  FeedKeeper feed_;
  RecheckBudget recheck_budget_;
  // Each violated key's lifecycle, fed each check's output once.
  metrics::ViolationLifecycle lifecycle_;
  std::map<std::string, std::shared_ptr<const metrics::CheckOutput>> observed_;
  std::shared_ptr<LaneProgress> progress_;
  RecoveryWatch recovery_;

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
