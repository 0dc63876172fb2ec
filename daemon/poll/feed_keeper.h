#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "changes/change_source.h"
#include "config/config.h"
#include "db/statement_watchdog.h"
#include "poll/scheduled_check.h"

namespace seatwatch::poll {

// The checks lane's change feed, from its making to its end. It is made by
// the factory while some check wants changes and the lane reads a primary;
// drained before a poll in which such a check is due, under the lane's
// watchdog; told after the poll what the full passes cost; made anew when
// [changes] or the watched tables change, or after a promotion; given up,
// its temporary slot with it, when no check wants it, while the lane reads a
// standby, and at stop. Whenever a feed goes, the checks that want changes
// are told it is down, so that the next feed's first batch is a new
// generation for them.
//
// Thread-safety: the poller's thread calls everything but Abort(), which any
// thread may call (Poller::Stop); the feed is replaced under a mutex so that
// Abort() never sees it half gone.
class FeedKeeper {
 public:
  using Factory = std::function<std::unique_ptr<changes::ChangeSource>(const config::Config&)>;

  // Without a factory (--once, most tests) there is never a feed.
  void SetFactory(Factory factory) { factory_ = std::move(factory); }

  // Makes, keeps or gives up the feed as `checks` want it. `remake`: a feed
  // that is wanted and exists is made anew all the same (its settings
  // changed). A factory that throws leaves the checks in full-pass mode.
  void Update(const config::Config& config, std::vector<ScheduledCheck>& checks, bool remake);

  // The checks lane's server, as its last facts said: on a standby the feed
  // is given up (its keys would be ahead of the standby's snapshot); after a
  // promotion a new one is made, a new slot, so a full pass first.
  void FollowRecovery(bool in_recovery, const config::Config& config,
                      std::vector<ScheduledCheck>& checks);

  // One drain, handed to every check that wants changes; the lane's
  // `watchdog` drops a slot session that stops answering. Needs a feed.
  void Drain(const config::Config& config, db::StatementWatchdog& watchdog,
             std::vector<ScheduledCheck>& checks);

  // What falling back to full passes would cost, in seconds (see
  // changes::ChangeSource::NoteFullPassCost); nothing without a feed.
  void NoteFullPassCost(double seconds);

  // seatwatch_changes_* in text format; empty without a feed.
  std::string RenderMetrics() const;

  // Cancels what the feed is doing now; any thread.
  void Abort();
  // Gives the feed up, its connection and its temporary slot with it (at stop).
  void Release();

  bool has_feed() const { return feed_ != nullptr; }

 private:
  bool Wanted(const std::vector<ScheduledCheck>& checks) const;

  Factory factory_;
  std::unique_ptr<changes::ChangeSource> feed_;  // replaced under mutex_
  std::mutex mutex_;
  // The checks lane reads a standby: no feed until it reads a primary.
  bool suspended_ = false;
};

// Whether the feed made for `a` serves `b` as it is: the same [changes]
// settings, database and watched tables. Otherwise a reload makes a new one
// (a new slot, so every incremental check starts over).
bool SameFeed(const config::Config& a, const config::Config& b);

}  // namespace seatwatch::poll
