#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "changes/change_source.h"
#include "checks/check.h"
#include "config/config.h"
#include "db/server_facts.h"
#include "db/session.h"
#include "db/statement_watchdog.h"
#include "metrics/poll_state.h"
#include "metrics/snapshot.h"
#include "poll/lane.h"
#include "poll/lane_progress.h"
#include "poll/recovery_watch.h"
#include "poll/scheduled_check.h"
#include "poll/state_publisher.h"

namespace seatwatch::poll {

// The loop that runs checks when they are due and publishes a snapshot after
// every poll. Run() is the body of the poller's thread, which alone touches
// its session and its checks; Stop() and Reload() may be called from any
// thread. Stop() cancels the statement in flight (and drops the connection
// if the cancel is not answered at once) and starts no further check;
// Reload() takes effect between polls. Every check runs under a
// StatementWatchdog: one that gets no answer within its statement_timeout
// plus kWatchdogMargin is cancelled and dropped, and the lane is published
// as overdue (seatwatch_up 0, none of its series) at that moment, even if
// its thread stays blocked.
//
// Incremental checks (Check::wants_changes): the checks lane's poller owns
// the change feed. Before a poll in which such a check is due it drains the
// feed once (under the lane's watchdog) and hands the batch to every check
// that wants changes; after the poll it tells the feed what the full passes
// cost. Stop() aborts the feed too.
//
// Before each poll's checks, and before the drain, the poller reads its
// server's facts (standby or primary, replay lag, identity: see
// db::ServerFactsReader) on the lane's session under the lane's watchdog,
// into PollState::servers. While the checks lane reads a standby it has no
// change feed (the feed's keys would be ahead of the standby's snapshot):
// incremental checks run full passes; after a promotion it makes a new one.
// A check that a standby's replay cancels (a recovery conflict) runs once
// more at once, on a new session if the conflict ended the old one.
class Poller {
 public:
  static constexpr std::chrono::seconds kWatchdogMargin{2};
  using ChangeFeedFactory =
      std::function<std::unique_ptr<changes::ChangeSource>(const config::Config&)>;

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
  void RunDue(const std::vector<ScheduledCheck*>& due, const std::function<bool()>& stopping);
  std::optional<db::ServerFacts> ReadFacts(const std::function<bool()>& stopping,
                                           std::string& unreachable);
  void FollowRecovery(const db::ServerFacts& facts);
  bool FeedWanted() const;
  void DrainChanges();
  void UpdateChangeFeed(bool config_changed);
  void ApplyPendingReload();
  void Publish();
  void UpdateHistory();
  void RebuildState();
  Clock::time_point NextDue() const;
  std::unique_ptr<db::Session> MakeSession() const;
  void Stamp();

  config::Config config_;
  Lane lane_;
  std::vector<ScheduledCheck> checks_;
  std::shared_ptr<StatePublisher> publisher_;
  std::size_t slot_;
  std::unique_ptr<db::Session> session_;
  std::unique_ptr<db::StatementWatchdog> watchdog_;
  metrics::PollState state_;
  ChangeFeedFactory feed_factory_;
  std::unique_ptr<changes::ChangeSource> feed_;  // replaced under mutex_ (Stop aborts it)
  std::shared_ptr<LaneProgress> progress_;
  db::ServerFactsReader facts_reader_;
  RecoveryWatch recovery_;
  // The checks lane reads a standby: no change feed until it reads a primary.
  bool feed_suspended_ = false;

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
