#include "poll/feed_keeper.h"

#include <algorithm>
#include <map>

#include "poll/lane.h"
#include "util/log.h"

namespace seatwatch::poll {

bool SameFeed(const config::Config& a, const config::Config& b) {
  auto tables = [](const config::Config& config) {
    std::vector<std::map<std::string, std::string>> out;
    for (const auto& entry : config.queries) {
      if (entry.incremental()) out.push_back(entry.tables);
    }
    return out;
  };
  const auto& x = a.changes;
  const auto& y = b.changes;
  return x.enabled == y.enabled && x.dsn == y.dsn && x.publication == y.publication &&
         x.slot_prefix == y.slot_prefix && x.statement_timeout == y.statement_timeout &&
         x.create_timeout == y.create_timeout && x.max_changes == y.max_changes &&
         a.database.dsn == b.database.dsn && tables(a) == tables(b);
}

bool FeedKeeper::Wanted(const std::vector<ScheduledCheck>& checks) const {
  return factory_ && std::any_of(checks.begin(), checks.end(), [](const auto& entry) {
           return entry.check->wants_changes();
         });
}

void FeedKeeper::Update(const config::Config& config, std::vector<ScheduledCheck>& checks,
                        bool remake) {
  bool wanted = Wanted(checks) && !suspended_;
  if (wanted && feed_ && !remake) return;
  std::unique_ptr<changes::ChangeSource> fresh;
  if (wanted) {
    try {
      fresh = factory_(config);
    } catch (const std::exception& e) {
      log::Error("cannot make the change feed; incremental checks run full passes",
                 {{"error", e.what()}});
    }
  }
  std::unique_ptr<changes::ChangeSource> old;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    old = std::move(feed_);
    feed_ = std::move(fresh);
  }
  if (old || !feed_) {
    // Whatever the checks were seeded in is gone: tell them, so that the
    // next feed's first batch is a new generation for them, whatever its
    // number.
    changes::ChangeBatch down;
    for (auto& entry : checks) {
      if (entry.check->wants_changes()) {
        entry.check->AcceptChanges(down, changes::ResyncReason::kStartup);
      }
    }
  }
  // `old` goes here: its slot with it.
}

void FeedKeeper::FollowRecovery(bool in_recovery, const config::Config& config,
                                std::vector<ScheduledCheck>& checks) {
  if (in_recovery == suspended_) return;
  suspended_ = in_recovery;
  if (suspended_ && Wanted(checks)) {
    log::Warn("checks lane reads a standby: incremental checks run full passes (the change "
              "feed needs the primary)");
  }
  // Suspended: the feed goes and its checks are told it is down. Resumed
  // (a promotion): a new feed, a new slot, so a full pass first.
  Update(config, checks, true);
}

void FeedKeeper::Drain(const config::Config& config, db::StatementWatchdog& watchdog,
                       std::vector<ScheduledCheck>& checks) {
  const auto& changes = config.changes;
  // Silence: one statement of the slot session; in all, a connect, ending a
  // given-up session (a wait bounded by statement_timeout), a slot creation,
  // the publication's inspection, the drain and the coverage read after it.
  auto silence = changes.statement_timeout + kWatchdogMargin;
  auto total = config.database.connect_timeout + changes.create_timeout +
               changes.statement_timeout * 6 + kWatchdogMargin;
  changes::ChangeBatch batch;
  changes::ResyncReason reason = changes::ResyncReason::kStartup;
  // The lane's watchdog: a slot session that stops answering is dropped
  // like a stalled check (the lane shows as overdue meanwhile), and SIGTERM
  // cancels a drain as it cancels a check.
  watchdog.Arm(feed_->shared_connection(), silence, total);
  try {
    batch = feed_->Drain();
    reason = feed_->generation_reason();
  } catch (const std::exception& e) {
    // Drain() promises not to throw; a down batch if it does.
    log::Error("change feed drain failed", {{"error", e.what()}});
    batch = changes::ChangeBatch{};
  }
  if (watchdog.Disarm()) {
    log::Warn("change feed gave no answer in time; connection dropped");
  }
  for (auto& entry : checks) {
    if (entry.check->wants_changes()) entry.check->AcceptChanges(batch, reason);
  }
}

void FeedKeeper::NoteFullPassCost(double seconds) {
  if (feed_) feed_->NoteFullPassCost(seconds);
}

std::string FeedKeeper::RenderMetrics() const {
  return feed_ ? feed_->RenderMetrics() : std::string();
}

void FeedKeeper::Abort() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (feed_) feed_->Abort();
}

void FeedKeeper::Release() {
  std::unique_ptr<changes::ChangeSource> feed;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    feed = std::move(feed_);
  }
}

}  // namespace seatwatch::poll
