#include "cleanup/cleanup_worker.h"

#include <cstdio>

#include <pqxx/except>

#include "cleanup/backoff_policy.h"
#include "cleanup/recovery_probe.h"
#include "util/duration.h"
#include "util/log.h"
#include "util/thread_name.h"

namespace seatwatch::cleanup {

namespace {

constexpr size_t kLoggedEvents = 5;

double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string Seconds(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3fs", value);
  return text;
}

std::string OneLine(std::string message) {
  while (!message.empty() && message.back() == '\n') message.pop_back();
  return message;
}

}  // namespace

db::SessionSettings CleanupSessionSettings(const config::Config& config) {
  db::SessionSettings settings;
  settings.application_name = config.database.application_name + "-cleanup";
  settings.connect_timeout = config.database.connect_timeout;
  settings.statement_timeout = config.cleanup.statement_timeout;
  settings.lock_timeout = config.cleanup.lock_timeout;
  settings.read_only = false;
  return settings;
}

CleanupWorker::CleanupWorker(const config::Config& config, CleanupMetrics metrics,
                             std::shared_ptr<PublishedText> out)
    : config_(config.cleanup),
      session_(config.database.dsn, CleanupSessionSettings(config),
               config.database.reconnect_max_backoff),
      metrics_(std::move(metrics)),
      out_(std::move(out)) {
  metrics_.Configure(config_);
  metrics_.SetLeader(false);
  Publish();
}

CleanupWorker::~CleanupWorker() { Stop(); }

void CleanupWorker::Start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { Run(); });
}

void CleanupWorker::RequestStop() {
  stop_.Request();
  watchdog_.Abort();
}

bool CleanupWorker::WaitStopped(std::chrono::milliseconds timeout) {
  if (!thread_.joinable()) return true;
  std::unique_lock<std::mutex> lock(finished_mutex_);
  return finished_wake_.wait_for(lock, timeout, [this] { return finished_; });
}

CleanupMetrics CleanupWorker::Stop() {
  RequestStop();
  if (thread_.joinable()) thread_.join();
  return metrics_;
}

void CleanupWorker::Publish() { out_->Publish(metrics_); }

void CleanupWorker::SetLeader(bool leader) {
  if (leader != metrics_.leader()) {
    if (leader) {
      log::Info("cleanup: this instance is now the cleanup leader",
                {{"application_name", session_.settings().application_name},
                 {"backend_pid", std::to_string(session_.backend_pid())}});
    } else {
      log::Info("cleanup: no longer the cleanup leader");
    }
  }
  metrics_.SetLeader(leader);
}

void CleanupWorker::NoteRecovery(bool in_recovery) {
  if (in_recovery && !announced_recovery_) {
    log::Warn("cleanup: the database is a standby (in recovery); holds are freed only on the "
              "primary, waiting",
              {{"dsn", session_.masked_dsn()},
               {"retry_every", util::FormatDuration(config_.interval)}});
  } else if (!in_recovery && announced_recovery_) {
    log::Info("cleanup: the database is a primary now; cleanup resumes");
  }
  announced_recovery_ = in_recovery;
  metrics_.SetInRecovery(in_recovery);
}

pqxx::connection& CleanupWorker::LiveConnection() {
  pqxx::connection* connection = &session_.Connection();
  // libpq learns that the server closed an idle connection (a terminated
  // backend, a restart) only when it next reads from it, and libpqxx 6.4
  // leaks the result of a statement that fails that way. Reading what is
  // pending first finds the closed connection without a statement; then the
  // session reconnects at once. Leadership went with the old backend.
  for (int i = 0; i < 2 && connection->is_open(); ++i) {
    try {
      connection->get_notifs();
    } catch (const pqxx::broken_connection&) {
      break;
    }
  }
  if (!connection->is_open()) {
    SetLeader(false);
    session_.CheckAfterError();
    connection = &session_.Connection();
  }
  return *connection;
}

bool CleanupWorker::RunOnce() {
  // No connection, or no answer about the lock, is not a failed batch: try
  // again next interval (the session itself spaces out reconnects), so that
  // leadership is taken up again soon after the database is back.
  pqxx::connection* connection = nullptr;
  try {
    connection = &LiveConnection();  // logs its own failures
  } catch (const std::exception&) {
    SetLeader(false);
    return false;
  }
  if (session_.pooled()) {
    RefusePooler();
    return false;
  }
  announced_pooler_ = false;
  // First whether the server is a standby (on every run: a promotion flips
  // it on this very connection), then the lock; both under one watchdog.
  bool in_recovery = false;
  bool leader = false;
  const char* failed_step = "cleanup: cannot ask whether the database is a standby";
  auto limit = config_.statement_timeout + kWatchdogMargin;
  watchdog_.Arm(session_.shared_connection(), limit, limit);
  try {
    in_recovery = InRecovery(*connection);
    if (!in_recovery) {
      failed_step = "cleanup: cannot check the leader lock";
      leader = leader_.Ensure(*connection);
    }
  } catch (const std::exception& e) {
    bool gave_up = watchdog_.Disarm();
    log::Warn(failed_step,
              {{"error", gave_up ? "no answer within statement_timeout plus a margin; "
                                   "connection dropped"
                                 : OneLine(e.what())}});
    if (gave_up) DropConnection();
    session_.CheckAfterError();
    SetLeader(false);
    return false;
  }
  if (watchdog_.Disarm()) {
    // Answered just as the watchdog gave up: the connection is being dropped.
    DropConnection();
    SetLeader(false);
    return false;
  }
  NoteRecovery(in_recovery);
  if (in_recovery) {
    // Not the leader, and not a failure either: nothing to free here, and no
    // reason to back off. The lock is never asked for on a standby (it could
    // be taken there, uselessly: a standby writes nothing).
    announced_standby_ = false;
    SetLeader(false);
    return false;
  }
  if (!leader && !announced_standby_) {
    log::Info("cleanup: another instance holds the cleanup leader lock; standing by",
              {{"retry_every", util::FormatDuration(config_.interval)}});
  }
  announced_standby_ = !leader;
  SetLeader(leader);
  if (!leader) return false;

  HoldCleanup cleanup(config_, metrics_, stop_);
  RunResult result = cleanup.Run(*connection, [this] { Publish(); },
                                 BatchDeadline{&watchdog_, session_.shared_connection()});
  if (result.gave_up) DropConnection();
  session_.CheckAfterError();
  if (!session_.connected()) SetLeader(false);  // the server dropped the lock with the backend
  if (result.outcome == BatchResult::kOk) metrics_.SetLastSuccess(UnixNow());
  metrics_.SetLastRun(UnixNow(), result.outcome, result.summary.freed(), result.error);
  LogRun(result);
  return result.outcome != BatchResult::kOk;
}

void CleanupWorker::RefusePooler() {
  // Not a failed batch: nothing ran, and backing off would change nothing.
  if (!announced_pooler_) {
    log::Error("cleanup: [database] dsn goes through a connection pooler; the cleanup needs a "
               "direct connection (its leader lock is a session-level advisory lock, which a "
               "pooler leaves on whichever server connection took it) and frees nothing",
               {{"dsn", session_.masked_dsn()}});
  }
  announced_pooler_ = true;
  SetLeader(false);
}

void CleanupWorker::DropConnection() {
  if (session_.connected() && metrics_.leader()) {
    log::Warn("cleanup: connection dropped; the leader lock goes with its backend once the "
              "server sees the connection end",
              {{"backend_pid", std::to_string(session_.backend_pid())}});
  }
  session_.Disconnect();
  SetLeader(false);
}

void CleanupWorker::LogRun(const RunResult& result) const {
  const auto& summary = result.summary;
  std::string freed = std::to_string(summary.freed());
  std::string events = SummarizeEvents(summary.per_event(), kLoggedEvents);
  std::string batches = std::to_string(summary.batches());
  const char* msg = config_.dry_run ? "cleanup dry run: would free expired holds"
                                    : "cleanup: freed expired holds";
  if (result.outcome != BatchResult::kOk) {
    log::Warn(msg, {{"freed", freed},
                    {"events", events},
                    {"batches", batches},
                    {"duration", Seconds(result.seconds)},
                    {"result", BatchResultLabel(result.outcome)},
                    {"error", result.error}});
    return;
  }
  // One line per run, also when it freed nothing: the log then shows that
  // the housekeeping job is alive and how long an empty pass costs.
  log::Write(log::Level::kInfo, msg,
             {{"freed", freed},
              {"events", events},
              {"batches", batches},
              {"duration", Seconds(result.seconds)},
              {"result", "ok"},
              {"stopped", result.stopped ? "true" : "false"}});
}

void CleanupWorker::Run() {
  thread_name::Set("sw-cleanup");
  log::Info("cleanup worker started", {{"dsn", session_.masked_dsn()},
                                       {"application_name", session_.settings().application_name},
                                       {"dry_run", config_.dry_run ? "true" : "false"}});
  BackoffPolicy backoff(config_.interval);
  while (!stop_.requested()) {
    bool failed = RunOnce();
    Publish();
    auto wait = backoff.Next(failed);
    if (failed) {
      log::Debug("cleanup: backing off", {{"wait_ms", std::to_string(wait.count())},
                                          {"failed_runs", std::to_string(backoff.failures())}});
    }
    if (stop_.WaitFor(wait)) break;
  }
  // No pg_advisory_unlock here: through a stalled path it would hang the
  // stop, and the lock is the session's, so the server releases it when the
  // backend ends (libpq's close does not wait for an answer).
  if (metrics_.leader() && session_.connected()) {
    log::Info("cleanup: closing the session; the server releases the leader lock with it");
  }
  session_.Disconnect();
  SetLeader(false);
  Publish();
  log::Info("cleanup worker stopped");
  {
    std::lock_guard<std::mutex> lock(finished_mutex_);
    finished_ = true;
  }
  finished_wake_.notify_all();
}

}  // namespace seatwatch::cleanup
