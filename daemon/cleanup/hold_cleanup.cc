#include "cleanup/hold_cleanup.h"

#include <stdexcept>

#include <pqxx/transaction>

#include "db/failure.h"

namespace seatwatch::cleanup {

namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

template <typename Transaction>
std::vector<FreedHold> RunIn(Transaction& tx, const config::CleanupConfig& config,
                             const std::string& sql) {
  // SET LOCAL: in force for this transaction only, whatever the session's
  // options say (and a pooler cannot leak it to another client).
  tx.exec0("SET LOCAL lock_timeout = " + std::to_string(config.lock_timeout.count()) +
           "; SET LOCAL statement_timeout = " + std::to_string(config.statement_timeout.count()));
  std::vector<FreedHold> freed = FreedFromRows(db::ToRows(tx.exec_params(sql, config.batch_size)));
  tx.commit();
  return freed;
}

}  // namespace

db::StatementWatchdog::Clock::duration BatchSilence(const config::CleanupConfig& config) {
  return config.statement_timeout + kWatchdogMargin;
}

db::StatementWatchdog::Clock::duration BatchBudget(const config::CleanupConfig& config) {
  return config.statement_timeout * 4 + kWatchdogMargin;
}

bool WantsAnotherBatch(const config::CleanupConfig& config, int batches_done, size_t freed_last) {
  if (config.dry_run) return false;
  if (batches_done >= config.max_batches) return false;
  return freed_last >= static_cast<size_t>(config.batch_size);
}

std::vector<FreedHold> FreedFromRows(const db::Rows& rows) {
  int event = rows.ColumnIndex("event_id");
  int seat = rows.ColumnIndex("seat");
  if (event < 0 || seat < 0) {
    std::string returned;
    for (const auto& column : rows.columns) returned += (returned.empty() ? "" : ", ") + column;
    throw std::runtime_error(
        "the cleanup statement must return the columns event_id and seat of each freed hold "
        "(it returns: " +
        (returned.empty() ? std::string("no columns") : returned) + ")");
  }
  std::vector<FreedHold> freed;
  freed.reserve(rows.values.size());
  for (const auto& row : rows.values) {
    freed.push_back({row[static_cast<size_t>(event)].value_or(""),
                     row[static_cast<size_t>(seat)].value_or("")});
  }
  return freed;
}

std::vector<FreedHold> RunBatch(pqxx::connection& connection, const config::CleanupConfig& config) {
  if (config.dry_run) {
    pqxx::transaction<pqxx::read_committed, pqxx::read_only> tx(connection,
                                                                "seatwatch_cleanup_dry_run");
    return RunIn(tx, config, config.dry_run_sql);
  }
  pqxx::transaction<pqxx::read_committed, pqxx::read_write> tx(connection, "seatwatch_cleanup");
  return RunIn(tx, config, config.sql);
}

HoldCleanup::HoldCleanup(const config::CleanupConfig& config, CleanupMetrics& metrics,
                         StopSignal& stop)
    : config_(config), metrics_(metrics), stop_(stop) {}

RunResult HoldCleanup::Run(pqxx::connection& connection, const AfterBatch& after_batch,
                            const BatchDeadline& deadline) {
  RunResult result;
  auto start = Clock::now();
  for (int batch = 0;; ++batch) {
    bool stop = batch == 0 ? stop_.requested() : stop_.WaitFor(config_.batch_pause);
    if (stop) {
      result.stopped = true;
      break;
    }
    auto batch_start = Clock::now();
    std::vector<FreedHold> freed;
    if (deadline.watchdog) {
      deadline.watchdog->Arm(deadline.connection, BatchSilence(config_), BatchBudget(config_));
    }
    try {
      freed = RunBatch(connection, config_);
      // Answered in time after all (the watchdog may have given up just as
      // the COMMIT came back): committed, so counted as such.
      if (deadline.watchdog) result.gave_up = deadline.watchdog->Disarm();
    } catch (const std::exception& e) {
      bool gave_up = deadline.watchdog && deadline.watchdog->Disarm();
      result.gave_up = result.gave_up || gave_up;
      result.outcome = !gave_up && db::ClassifyException(e) == db::FailureReason::kLockTimeout
                           ? BatchResult::kLockTimeout
                           : BatchResult::kError;
      result.error = e.what();
      while (!result.error.empty() && result.error.back() == '\n') result.error.pop_back();
      if (gave_up && stop_.requested()) {
        result.stopped = true;
        result.error = "stopping: the batch in flight was cancelled and rolled back";
      } else if (gave_up) {
        result.error = "no answer within statement_timeout plus a margin (" +
                       std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                          BatchSilence(config_))
                                          .count()) +
                       "ms); the batch was cancelled and the connection dropped";
      }
      metrics_.ObserveBatch(result.outcome, SecondsSince(batch_start));
      // A batch given up on takes the connection, and the leader lock with
      // it: the worker publishes once it has dropped both, so that no scrape
      // shows the error beside a leadership already lost.
      if (after_batch && !gave_up) after_batch();
      break;
    }
    metrics_.ObserveBatch(BatchResult::kOk, SecondsSince(batch_start));
    metrics_.AddFreed(freed.size());
    result.summary.AddBatch(freed);
    if (after_batch) after_batch();
    if (result.gave_up) break;  // the connection is being dropped
    if (!WantsAnotherBatch(config_, batch + 1, freed.size())) break;
  }
  result.seconds = SecondsSince(start);
  return result;
}

}  // namespace seatwatch::cleanup
