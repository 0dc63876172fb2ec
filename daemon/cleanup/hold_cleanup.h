#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <pqxx/connection>

#include "cleanup/cleanup_metrics.h"
#include "cleanup/run_summary.h"
#include "cleanup/stop_signal.h"
#include "config/config.h"
#include "db/rows.h"
#include "db/statement_watchdog.h"

namespace seatwatch::cleanup {

// How one cleanup run ended.
struct RunResult {
  BatchResult outcome = BatchResult::kOk;  // kOk: every batch it ran succeeded
  std::string error;                       // the failed batch's message
  RunSummary summary;
  double seconds = 0;
  bool stopped = false;  // a stop request ended it (between batches, or cancelled one)
  bool gave_up = false;  // the watchdog gave up on a batch and dropped the connection
};

// Beyond the cleanup's statement_timeout, how long a batch may go without an
// answer before the watchdog gives up on it (as the poll lanes do).
constexpr std::chrono::seconds kWatchdogMargin{2};

// The watchdog's limits for one batch: silence, statement_timeout plus the
// margin; in all, one statement_timeout for each of its statements (BEGIN,
// SET LOCAL, the batch, COMMIT) plus the margin.
db::StatementWatchdog::Clock::duration BatchSilence(const config::CleanupConfig& config);
db::StatementWatchdog::Clock::duration BatchBudget(const config::CleanupConfig& config);

// A client-side deadline around each batch: `watchdog` is armed on
// `connection` (the same connection the run uses) for every batch. Without a
// watchdog, batches run without one.
struct BatchDeadline {
  db::StatementWatchdog* watchdog = nullptr;
  std::shared_ptr<pqxx::connection> connection;
};

// Pure: whether a run goes on after its `batches_done`-th batch freed
// `freed_last` holds. A batch that frees fewer than batch_size has reached
// the end of the backlog (or of the rows nobody else has locked right now);
// max_batches bounds one run; a dry run changes nothing, so a second batch
// would only count the same rows again.
bool WantsAnotherBatch(const config::CleanupConfig& config, int batches_done, size_t freed_last);

// Pure: a batch's result to the holds it freed. The statement must return
// the columns event_id and seat; throws std::runtime_error if it does not.
std::vector<FreedHold> FreedFromRows(const db::Rows& rows);

// One batch as one short transaction: BEGIN (READ ONLY for a dry run); SET
// LOCAL lock_timeout and statement_timeout; the statement with $1 = batch
// size; the rows checked by FreedFromRows; COMMIT. A statement that returns
// the wrong columns is rolled back, not committed. Throws whatever the
// database threw (nothing is committed then).
std::vector<FreedHold> RunBatch(pqxx::connection& connection, const config::CleanupConfig& config);

// One cleanup run: batches until one frees fewer than batch_size, or
// max_batches, or a batch fails (a lock timeout or any error ends the run;
// the caller backs off), or a stop is requested (checked between batches; the
// worker's stop also aborts its watchdog, which cancels the batch in flight:
// it is rolled back, counted as failed, and its holds are freed by a later
// run). A batch the watchdog gave up on (no answer within BatchSilence) is a
// failed batch too. Counts every batch and every freed hold into `metrics`.
// Runs on the cleanup worker's thread only.
class HoldCleanup {
 public:
  using AfterBatch = std::function<void()>;

  HoldCleanup(const config::CleanupConfig& config, CleanupMetrics& metrics, StopSignal& stop);

  // `after_batch` runs after each batch (the worker publishes its metrics).
  RunResult Run(pqxx::connection& connection, const AfterBatch& after_batch = {},
                const BatchDeadline& deadline = {});

 private:
  const config::CleanupConfig& config_;
  CleanupMetrics& metrics_;
  StopSignal& stop_;
};

}  // namespace seatwatch::cleanup
