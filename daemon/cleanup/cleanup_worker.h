#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "cleanup/cleanup_leader.h"
#include "cleanup/cleanup_metrics.h"
#include "cleanup/hold_cleanup.h"
#include "cleanup/published_text.h"
#include "cleanup/stop_signal.h"
#include "config/config.h"
#include "db/session.h"
#include "db/statement_watchdog.h"

namespace seatwatch::cleanup {

// The cleanup connection's settings: the configured application_name with
// "-cleanup" appended (so a DBA sees in pg_stat_activity which session
// writes), writes allowed, the cleanup's own timeouts.
db::SessionSettings CleanupSessionSettings(const config::Config& config);

// Runs hold cleanup on its own thread and its own database session, apart
// from the poller: every interval it asks whether the database is a standby
// (then it frees nothing, is not the leader, and waits without backing off:
// seatwatch_cleanup_in_recovery 1), else makes sure it is the leader (see
// CleanupLeader) and, if it is, runs HoldCleanup; after a run with a failed
// batch it backs off (BackoffPolicy). Without a connection it is not the
// leader and tries again next interval. Through a connection pooler (see
// db::Session::pooled()) it never leads: the leader lock needs a real
// session, so it says so once and frees nothing. Logs one line per run (at debug
// level when there was nothing to free) and publishes its metrics text after
// every batch and every run.
//
// Every statement on its connection runs under a StatementWatchdog (silence:
// the cleanup's statement_timeout plus a margin), so a path that stops
// answering fails the batch in bounded time instead of hanging the cleanup;
// the connection is dropped then, and the leader lock with it (the server
// releases it when the backend ends). A stop aborts the watchdog: the batch
// in flight is cancelled and rolled back, and the thread ends within about
// a second, stalled path or not (a connect attempt in progress excepted:
// libpq bounds it by connect_timeout alone).
//
// Thread-safety: Start(), RequestStop(), WaitStopped() and Stop() from one
// controlling thread; everything else happens on the worker's thread; the
// PublishedText is the only shared state and is thread-safe.
class CleanupWorker {
 public:
  CleanupWorker(const config::Config& config, CleanupMetrics metrics,
                std::shared_ptr<PublishedText> out);
  ~CleanupWorker();
  CleanupWorker(const CleanupWorker&) = delete;
  CleanupWorker& operator=(const CleanupWorker&) = delete;

  void Start();
  // Asks the thread to stop and cancels the batch in flight; returns at once.
  void RequestStop();
  // Whether the thread has finished (or was never started) within `timeout`.
  bool WaitStopped(std::chrono::milliseconds timeout);
  // RequestStop(), then joins the thread, which disconnects (the server
  // releases the leader lock with the session). Returns the metrics, so that
  // a worker started after a reload carries the counters on. Idempotent.
  CleanupMetrics Stop();

 private:
  void Run();
  // The session's connection, reconnected first if the server has closed it.
  pqxx::connection& LiveConnection();
  // One turn: leadership, then (as leader) one cleanup run. True if a batch
  // of the run failed (the next run then backs off).
  bool RunOnce();
  void SetLeader(bool leader);
  // Records what pg_is_in_recovery() said; logs once per change.
  void NoteRecovery(bool in_recovery);
  // The session goes through a connection pooler: never the leader there;
  // says so once (again after a direct connection in between).
  void RefusePooler();
  // After the watchdog gave up: closes the session (the server then drops
  // the leader lock with the backend) and says so.
  void DropConnection();
  void LogRun(const RunResult& result) const;
  void Publish();

  config::CleanupConfig config_;
  db::Session session_;
  CleanupLeader leader_;
  CleanupMetrics metrics_;
  std::shared_ptr<PublishedText> out_;
  StopSignal stop_;
  bool announced_standby_ = false;   // another instance leads: said once
  bool announced_recovery_ = false;  // the database is a standby: said once
  bool announced_pooler_ = false;    // the session goes through a pooler: said once
  db::StatementWatchdog watchdog_{"cleanup"};
  std::mutex finished_mutex_;
  std::condition_variable finished_wake_;
  bool finished_ = false;
  std::thread thread_;
};

}  // namespace seatwatch::cleanup
