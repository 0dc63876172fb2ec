#include "poll/poller.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "poll/check_runner.h"
#include "poll/violation_log.h"
#include "util/heap.h"
#include "util/log.h"

namespace seatwatch::poll {

namespace {

double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::vector<ScheduledCheck> Schedule(std::vector<std::unique_ptr<checks::Check>> checks) {
  std::vector<ScheduledCheck> out;
  for (auto& check : checks) {
    ScheduledCheck entry;
    entry.status.name = check->name();
    entry.status.interval_seconds = std::chrono::duration<double>(check->interval()).count();
    entry.status.invariants = check->invariants();
    entry.status.help = check->invariant_help();
    entry.status.incremental = check->incremental_status();
    InitErrorCounters(entry.status);
    entry.check = std::move(check);
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace

Poller::Poller(config::Config config, std::vector<std::unique_ptr<checks::Check>> checks,
               metrics::SnapshotStore& store, std::string version)
    : Poller(std::move(config), std::move(checks), Lane::kChecks,
             std::make_shared<StatePublisher>(store, 1), 0, std::move(version)) {}

Poller::Poller(config::Config config, std::vector<std::unique_ptr<checks::Check>> checks,
               Lane lane, std::shared_ptr<StatePublisher> publisher, std::size_t slot,
               std::string version)
    : config_(std::move(config)),
      lane_(lane),
      checks_(Schedule(std::move(checks))),
      publisher_(std::move(publisher)),
      slot_(slot),
      lane_session_(config_, lane_,
                    [publisher = publisher_, slot = slot_] { publisher->MarkOverdue(slot); }),
      recheck_budget_(config_),
      lifecycle_(UnixNow()) {
  state_.version = std::move(version);
  RebuildState();
  Publish();
}

Poller::~Poller() = default;

void Poller::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    wake_.notify_all();
  }
  feed_.Abort();
  lane_session_.Abort();
}

void Poller::SetProgress(std::shared_ptr<LaneProgress> progress) {
  progress_ = std::move(progress);
}

void Poller::Stamp() {
  if (progress_) progress_->Stamp(slot_);
}

void Poller::SetChangeFeedFactory(ChangeFeedFactory factory) {
  feed_.SetFactory(std::move(factory));
  feed_.Update(config_, checks_, true);
  RebuildState();
}

void Poller::Reload(config::Config config, std::vector<std::unique_ptr<checks::Check>> checks) {
  std::lock_guard<std::mutex> lock(mutex_);
  pending_ = std::make_unique<PendingReload>(PendingReload{std::move(config), std::move(checks)});
  wake_.notify_all();
}

void Poller::ApplyPendingReload() {
  std::unique_ptr<PendingReload> pending;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    pending = std::move(pending_);
  }
  if (!pending) return;
  std::map<std::string, ScheduledCheck> previous;
  for (auto& entry : checks_) previous.emplace(entry.status.name, std::move(entry));
  checks_ = Schedule(std::move(pending->checks));
  for (auto& entry : checks_) {
    auto it = previous.find(entry.status.name);
    if (it == previous.end()) continue;
    // Same name: keep counters and last results; the new definition runs
    // at its next due time.
    entry.check->TakeStateFrom(*it->second.check);
    auto interval = entry.status.interval_seconds;
    auto invariants = entry.status.invariants;
    auto help = entry.status.help;
    entry.status = std::move(it->second.status);
    entry.status.interval_seconds = interval;
    entry.status.invariants = invariants;
    entry.status.help = help;
    entry.status.incremental = entry.check->incremental_status();
    entry.next_due = it->second.next_due;
  }
  ForgetUnconfigured();
  bool database_changed = !SameSession(pending->config, config_, lane_);
  bool feed_changed = !SameFeed(pending->config, config_);
  // An incremental check that starts afresh (a new entry, or one whose
  // queries changed) never saw the batches drained so far: a commit decoded
  // in one of them but not yet visible would be missed by its first full
  // pass. A new slot puts every check on the same footing (its readiness
  // query waits for such commits).
  for (const auto& entry : checks_) {
    auto status = entry.check->incremental_status();
    if (status && status->last_full_pass_unix == 0) feed_changed = true;
  }
  if (lane_ == Lane::kChecks && pending->config.http.listen != config_.http.listen) {
    log::Warn("http.listen changed; it takes effect after a restart",
              {{"listen", config_.http.listen}});
  }
  config_ = std::move(pending->config);
  recheck_budget_.Configure(config_);
  if (database_changed) {
    log::Info("database settings changed; reconnecting", {{"lane", LaneName(lane_)}});
    lane_session_.Reconnect(config_);
  }
  // A lane left without checks ([locks] disabled) keeps no idle session open,
  // and reports no server.
  if (checks_.empty()) {
    lane_session_.session().Disconnect();
    state_.servers.clear();
  }
  feed_.Update(config_, checks_, feed_changed);
  RebuildState();
  log::Info("configuration reloaded",
            {{"lane", LaneName(lane_)}, {"checks", std::to_string(checks_.size())}});
}

Clock::time_point Poller::NextDue() const {
  Clock::time_point next = Clock::time_point::max();
  for (const auto& entry : checks_) next = std::min(next, entry.next_due);
  return next;
}

void Poller::PollDue(bool force_all) {
  auto now = Clock::now();
  // Data checks first, as before: the lane's verdicts, then its own-snapshot
  // checks.
  std::vector<ScheduledCheck*> due;
  std::vector<ScheduledCheck*> own;
  bool wants_changes = false;
  for (auto& entry : checks_) {
    if (!force_all && entry.next_due > now) continue;
    (entry.check->shares_snapshot() ? due : own).push_back(&entry);
    wants_changes = wants_changes || entry.check->wants_changes();
    // Keep the cadence, but never queue up missed runs after a stall.
    entry.next_due += entry.check->interval();
    if (entry.next_due <= now) entry.next_due = now + entry.check->interval();
  }
  due.insert(due.end(), own.begin(), own.end());
  if (due.empty()) return;
  state_.last_poll_unix = UnixNow();
  // The intervals the checks were just scheduled with, before the drain
  // and the runs can change them.
  std::vector<checks::Millis> intervals;
  for (auto* entry : due) intervals.push_back(entry->check->interval());
  // Which of them were seeded before the run: only their runs are rechecks.
  std::vector<std::optional<metrics::IncrementalStatus>> before;
  for (auto* entry : due) before.push_back(entry->check->incremental_status());
  auto stopping = [this] {
    std::lock_guard<std::mutex> lock(mutex_);
    return stop_;
  };
  // The facts first: whether the checks lane may use its change feed in
  // this poll depends on them.
  std::string unreachable;
  std::optional<db::ServerFacts> facts = lane_session_.ReadFacts(stopping, unreachable);
  state_.servers.clear();
  if (facts) {
    state_.servers.push_back({LaneName(lane_), *facts});
    FollowRecovery(*facts);
  }
  if (wants_changes && feed_.has_feed()) feed_.Drain(config_, lane_session_.watchdog(), checks_);
  if (unreachable.empty()) {
    lane_session_.RunDue(config_, due, stopping, [this] { Stamp(); });
  } else {
    FailAll(due, db::FailureReason::kConnection, unreachable);
  }
  // An incremental check's interval follows its mode ([changes] interval
  // while seeded in a live feed): reschedule one whose run changed it.
  for (std::size_t i = 0; i < due.size(); ++i) {
    if (!due[i]->check->wants_changes()) continue;
    auto interval = due[i]->check->interval();
    if (interval != intervals[i]) due[i]->next_due = now + interval;
  }
  HoldBackExpensiveRechecks(due, before, now);
  // What falling back to full passes would cost: the last full pass of
  // every incremental check (entries sharing a query paid it once).
  double full_pass_cost = 0;
  for (const auto& entry : checks_) {
    if (entry.status.incremental) full_pass_cost += entry.status.incremental->last_full_pass_seconds;
  }
  if (full_pass_cost > 0) feed_.NoteFullPassCost(full_pass_cost);
  db::Session& session = lane_session_.session();
  session.CheckAfterError();
  state_.database_up = session.connected();
  if (state_.database_up) state_.last_successful_poll_unix = state_.last_poll_unix;
}

// What this cycle's rechecks took decides when the next cycle may start
// (RecheckBudget); a check still seeded waits for it, one that fell back to
// full passes keeps its own schedule.
void Poller::HoldBackExpensiveRechecks(
    const std::vector<ScheduledCheck*>& due,
    const std::vector<std::optional<metrics::IncrementalStatus>>& before, Clock::time_point start) {
  double recheck_seconds = 0;
  bool rechecked = false;
  for (std::size_t i = 0; i < due.size(); ++i) {
    auto after = due[i]->check->incremental_status();
    if (!before[i] || !after || !WasRecheck(*before[i], *after)) continue;
    rechecked = true;
    recheck_seconds += due[i]->status.database_seconds;
  }
  if (!rechecked) return;
  Clock::time_point not_before = recheck_budget_.Record(start, recheck_seconds);
  for (auto& entry : checks_) {
    auto status = entry.check->incremental_status();
    if (status && status->mode == "incremental") entry.next_due = std::max(entry.next_due, not_before);
  }
}

void Poller::FollowRecovery(const db::ServerFacts& facts) {
  recovery_.Observe(facts.in_recovery, LaneName(lane_), lane_session_.session().masked_dsn());
  // Only the checks lane has a change feed.
  if (lane_ == Lane::kChecks) feed_.FollowRecovery(facts.in_recovery, config_, checks_);
}

// Only a reload changes which checks and invariants there are: what the
// lifecycle kept of the others is dropped then, once.
void Poller::ForgetUnconfigured() {
  std::set<std::pair<std::string, std::string>> configured;
  for (const auto& entry : checks_) {
    for (const auto& name : entry.status.invariants) configured.insert({entry.status.name, name});
  }
  lifecycle_.Retain(configured);
  for (auto it = observed_.begin(); it != observed_.end();) {
    bool kept = false;
    for (const auto& entry : checks_) kept = kept || entry.status.name == it->first;
    it = kept ? std::next(it) : observed_.erase(it);
  }
}

void Poller::UpdateHistory() {
  double now = UnixNow();
  for (const auto& entry : checks_) {
    // Each output once: a poll that ran other checks publishes this one's
    // last output again, which says nothing new of its keys.
    const auto& output = entry.status.output;
    if (!output || observed_[entry.status.name] == output) continue;
    observed_[entry.status.name] = output;
    lifecycle_.Observe(entry.status.name, output->invariants, now);
  }
  std::uint64_t more = 0;
  auto opened = lifecycle_.TakeOpened(&more);
  for (const auto& violation : opened) {
    bool incremental = false;
    for (const auto& entry : checks_) {
      if (entry.status.name != violation.check) continue;
      incremental = entry.status.incremental && entry.status.incremental->mode == "incremental";
    }
    LogOpenedViolation(violation, incremental);
  }
  if (more > 0) LogMoreOpened(more);
  state_.lifecycles = {lifecycle_.State()};
  for (const auto& entry : checks_) {
    if (!entry.status.output) continue;
    for (const auto& invariant : entry.status.output->invariants) {
      auto it = state_.history.find(invariant.name);
      bool ok = invariant.ok();
      if (it == state_.history.end()) {
        state_.history[invariant.name] = {ok, now};
      } else if (it->second.ok != ok) {
        it->second = {ok, now};
      }
    }
  }
}

void Poller::RebuildState() {
  state_.poll_interval_seconds = std::chrono::duration<double>(config_.poll.interval).count();
  state_.checks.clear();
  for (const auto& entry : checks_) state_.checks.push_back(entry.status);
}

void Poller::Publish() {
  UpdateHistory();
  RebuildState();
  state_.changes_metrics = feed_.RenderMetrics();
  if (!state_.changes_metrics.empty()) state_.changes_metrics += recheck_budget_.RenderMetrics();
  publisher_->Publish(slot_, state_);
  // The poll's rows are freed by now, and the previous snapshot with
  // them unless a scrape still holds it.
  heap::ReleaseFreePages();
}

void Poller::Run() {
  log::Info("poller started", {{"lane", LaneName(lane_)},
                               {"checks", std::to_string(checks_.size())},
                               {"dsn", lane_session_.session().masked_dsn()}});
  // The heartbeat's longest gap while waiting (see LaneProgress).
  Clock::duration stamp_period =
      progress_ ? progress_->stamp_period() : Clock::duration(std::chrono::hours(1));
  while (true) {
    Stamp();
    ApplyPendingReload();
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (stop_) break;
    }
    PollDue(false);
    Publish();
    if (progress_) progress_->MarkPublished(slot_);
    std::unique_lock<std::mutex> lock(mutex_);
    if (stop_) break;
    if (pending_) continue;
    auto next = NextDue();
    if (next == Clock::time_point::max()) next = Clock::now() + std::chrono::hours(1);
    // Waking only to stamp publishes nothing: a new snapshot per stamp
    // would cost every scrape its cached parts.
    while (!stop_ && !pending_ && Clock::now() < next) {
      Stamp();
      wake_.wait_until(lock, std::min(next, Clock::now() + stamp_period));
    }
  }
  lane_session_.session().Disconnect();
  // Its connection, and the temporary slot with it.
  feed_.Release();
  log::Info("poller stopped", {{"lane", LaneName(lane_)}});
}

metrics::PollState Poller::RunAllOnce() {
  PollDue(true);
  UpdateHistory();
  RebuildState();
  lane_session_.session().Disconnect();
  return state_;
}

}  // namespace seatwatch::poll
