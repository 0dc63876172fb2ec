#include "poll/poller.h"

#include <algorithm>
#include <map>

#include "metrics/snapshot_builder.h"
#include "poll/check_runner.h"
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
    InitErrorCounters(entry.status);
    entry.check = std::move(check);
    out.push_back(std::move(entry));
  }
  return out;
}

// The watchdog's limits for one check (see StatementWatchdog): silence, the
// check's statement_timeout plus a margin; in all, one statement_timeout per
// statement it may run (its query, one detail query per invariant, the
// transaction's own) plus the margin.
db::StatementWatchdog::Clock::duration Silence(const checks::Check& check,
                                               const TransactionSettings& wanted) {
  return check.statement_timeout().value_or(wanted.statement_timeout) + Poller::kWatchdogMargin;
}

db::StatementWatchdog::Clock::duration Budget(const checks::Check& check,
                                              const TransactionSettings& wanted) {
  auto timeout = check.statement_timeout().value_or(wanted.statement_timeout);
  return timeout * static_cast<int>(2 + check.invariants().size()) + Poller::kWatchdogMargin;
}

bool SameSession(const config::Config& a, const config::Config& b, Lane lane) {
  db::SessionSettings x = LaneSessionSettings(a, lane);
  db::SessionSettings y = LaneSessionSettings(b, lane);
  return a.database.dsn == b.database.dsn &&
         a.database.reconnect_max_backoff == b.database.reconnect_max_backoff &&
         x.application_name == y.application_name && x.connect_timeout == y.connect_timeout &&
         x.statement_timeout == y.statement_timeout && x.lock_timeout == y.lock_timeout &&
         x.read_only == y.read_only;
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
      slot_(slot) {
  state_.version = std::move(version);
  session_ = MakeSession();
  watchdog_ = std::make_unique<db::StatementWatchdog>(
      LaneName(lane_), [publisher = publisher_, slot = slot_] { publisher->MarkOverdue(slot); });
  RebuildState();
  Publish();
}

Poller::~Poller() = default;

std::unique_ptr<db::Session> Poller::MakeSession() const {
  return std::make_unique<db::Session>(config_.database.dsn, LaneSessionSettings(config_, lane_),
                                       config_.database.reconnect_max_backoff);
}

void Poller::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    wake_.notify_all();
  }
  watchdog_->Abort();
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
    entry.status = std::move(it->second.status);
    entry.status.interval_seconds = interval;
    entry.status.invariants = invariants;
    entry.next_due = it->second.next_due;
  }
  bool database_changed = !SameSession(pending->config, config_, lane_);
  if (lane_ == Lane::kChecks && pending->config.http.listen != config_.http.listen) {
    log::Warn("http.listen changed; it takes effect after a restart",
              {{"listen", config_.http.listen}});
  }
  config_ = std::move(pending->config);
  if (database_changed) {
    log::Info("database settings changed; reconnecting", {{"lane", LaneName(lane_)}});
    session_ = MakeSession();
  }
  // A lane left without checks ([locks] disabled) keeps no idle session open.
  if (checks_.empty()) session_->Disconnect();
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
  for (auto& entry : checks_) {
    if (!force_all && entry.next_due > now) continue;
    (entry.check->shares_snapshot() ? due : own).push_back(&entry);
    // Keep the cadence, but never queue up missed runs after a stall.
    entry.next_due += entry.check->interval();
    if (entry.next_due <= now) entry.next_due = now + entry.check->interval();
  }
  due.insert(due.end(), own.begin(), own.end());
  if (due.empty()) return;
  state_.last_poll_unix = UnixNow();

  TransactionSettings wanted{config_.database.statement_timeout, config_.database.lock_timeout};
  // What the session's connection options already set in every transaction.
  TransactionSettings session{session_->settings().statement_timeout,
                              session_->settings().lock_timeout};
  auto stopping = [this] {
    std::lock_guard<std::mutex> lock(mutex_);
    return stop_;
  };
  // One poll's query results: entries sharing one query and params cost one
  // execution, whichever of them runs first.
  db::QueryCache queries;
  bool ran_any = false;
  bool retried = false;
  for (std::size_t i = 0; i < due.size(); ++i) {
    if (stopping()) break;
    std::vector<ScheduledCheck*> rest(due.begin() + static_cast<long>(i), due.end());
    if (ran_any && !session_->connected()) {
      // Lost mid-poll: the rest could not run, and must not keep showing
      // their previous results. The next poll reconnects.
      FailAll(rest, db::FailureReason::kConnection, "lost the database connection");
      break;
    }
    pqxx::connection* connection = nullptr;
    try {
      connection = &session_->Connection();
    } catch (const std::exception& e) {
      FailAll(rest, db::FailureReason::kConnection, e.what());
      break;
    }
    bool may_retry = !ran_any && !retried;
    watchdog_->Arm(session_->shared_connection(), Silence(*due[i]->check, wanted),
                   Budget(*due[i]->check, wanted));
    RunOutcome outcome =
        RunCheckTransaction(*connection, *due[i], queries, wanted, session, may_retry);
    bool gave_up = watchdog_->Disarm();
    session_->CheckAfterError();
    if (outcome == RunOutcome::kLostBeforeStart && may_retry && (gave_up || stopping())) {
      RecordFailure(*due[i], db::FailureReason::kConnection,
                    gave_up ? "no answer in time; connection dropped" : "stopping", 0);
    } else if (outcome == RunOutcome::kLostBeforeStart && may_retry) {
      // The server closed the session while it was idle between polls
      // (idle_session_timeout, pg_terminate_backend, a restart): nothing of
      // this poll has run, so reconnect and run it now rather than report
      // the whole lane down until the next poll. Once: a second failure
      // goes through the reconnect backoff.
      log::Info("database session was closed while idle; reconnecting at once",
                {{"lane", LaneName(lane_)}});
      session_->Disconnect();
      retried = true;
      --i;
      continue;
    }
    ran_any = true;
  }
  session_->CheckAfterError();
  state_.database_up = session_->connected();
  if (state_.database_up) state_.last_successful_poll_unix = state_.last_poll_unix;
}

void Poller::UpdateHistory() {
  double now = UnixNow();
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
  publisher_->Publish(slot_, state_);
  // The poll's rows are freed by now, and the previous snapshot with
  // them unless a scrape still holds it.
  heap::ReleaseFreePages();
}

void Poller::Run() {
  log::Info("poller started", {{"lane", LaneName(lane_)},
                               {"checks", std::to_string(checks_.size())},
                               {"dsn", session_->masked_dsn()}});
  while (true) {
    ApplyPendingReload();
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (stop_) break;
    }
    PollDue(false);
    Publish();
    std::unique_lock<std::mutex> lock(mutex_);
    if (stop_) break;
    if (pending_) continue;
    auto next = NextDue();
    if (next == Clock::time_point::max()) next = Clock::now() + std::chrono::hours(1);
    wake_.wait_until(lock, next, [this] { return stop_ || pending_ != nullptr; });
  }
  session_->Disconnect();
  log::Info("poller stopped", {{"lane", LaneName(lane_)}});
}

metrics::PollState Poller::RunAllOnce() {
  PollDue(true);
  UpdateHistory();
  RebuildState();
  session_->Disconnect();
  return state_;
}

}  // namespace seatwatch::poll
