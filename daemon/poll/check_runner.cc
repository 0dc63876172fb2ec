#include "poll/check_runner.h"

#include <memory>

#include <pqxx/except>
#include <pqxx/transaction>

#include "checks/query_entry.h"
#include "db/lazy_transaction.h"
#include "db/local_settings.h"
#include "util/log.h"

namespace seatwatch::poll {

namespace {

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string Trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

using SnapshotTransaction = pqxx::transaction<pqxx::repeatable_read, pqxx::read_only>;
using OwnTransaction = pqxx::transaction<pqxx::read_committed, pqxx::read_only>;

// BEGIN: throws what libpqxx throws; a broken_connection here means nothing
// of the check has run.
std::unique_ptr<pqxx::transaction_base> Begin(pqxx::connection& connection, bool snapshot) {
  if (snapshot) return std::make_unique<SnapshotTransaction>(connection, "seatwatch_check");
  return std::make_unique<OwnTransaction>(connection, "seatwatch_check");
}

}  // namespace

void FailAll(const std::vector<ScheduledCheck*>& group, db::FailureReason reason,
             const std::string& message) {
  for (ScheduledCheck* entry : group) RecordFailure(*entry, reason, message, 0);
}

RunOutcome RunCheckTransaction(pqxx::connection& connection, ScheduledCheck& entry,
                               db::QueryCache& queries, const db::LocalSettings& wanted,
                               bool may_retry, bool may_retry_conflict) {
  auto start = Clock::now();
  db::LocalSettings own = wanted;
  if (auto timeout = entry.check->statement_timeout()) own.statement_timeout = *timeout;
  // Begun by the check's first statement: a check served whole from the
  // poll's cache opens none.
  db::LazyTransaction tx([&] { return Begin(connection, entry.check->shares_snapshot()); },
                         // Always, whatever the connection options say: a
                         // transaction pooler drops those, or runs this
                         // transaction on a server connection opened for
                         // another client.
                         [&](pqxx::transaction_base& begun) { db::SetLocal(begun, own); });
  // Whatever the outcome, the run's time on the server is what it was.
  struct DatabaseTime {
    db::LazyTransaction& tx;
    ScheduledCheck& entry;
    ~DatabaseTime() { entry.status.database_seconds = tx.database_seconds(); }
  } database_time{tx, entry};
  try {
    checks::CheckContext context{tx, queries, std::chrono::system_clock::now()};
    metrics::CheckOutput output = entry.check->Run(context);
    tx.Commit();
    RecordSuccess(entry, std::move(output), SecondsSince(start), UnixNow());
  } catch (const checks::EntryMismatch& e) {
    log::Error("check does not match its configuration",
               {{"check", entry.status.name}, {"error", e.what()}});
    RecordFailure(entry, db::FailureReason::kSql, e.what(), SecondsSince(start));
  } catch (const std::exception& e) {
    if (tx.failed_to_begin()) {
      // A session the server closed while idle fails at BEGIN, as a broken
      // connection or as the server's FATAL (57P01, 57P05) on a closed
      // socket: nothing of the check has run.
      bool lost =
          dynamic_cast<const pqxx::broken_connection*>(&e) != nullptr || !connection.is_open();
      if (!lost || !may_retry) {
        RecordFailure(entry, lost ? db::FailureReason::kConnection : db::ClassifyException(e),
                      e.what(), SecondsSince(start));
      }
      return lost ? RunOutcome::kLostBeforeStart : RunOutcome::kRan;
    }
    db::FailureReason reason = db::ClassifyException(e);
    if (reason == db::FailureReason::kRecoveryConflict && may_retry_conflict) {
      // A standby's replay cancelled it: a new snapshot will most likely
      // not conflict again, so the check runs once more before it is
      // reported failed; the cancel still shows in its error counter.
      CountFailedAttempt(entry, reason);
      log::Warn("check cancelled by a recovery conflict; running it again",
                {{"check", entry.status.name}, {"error", Trimmed(e.what())}});
      return RunOutcome::kRecoveryConflict;
    }
    RecordFailure(entry, reason, e.what(), SecondsSince(start));
  }
  return RunOutcome::kRan;
}

}  // namespace seatwatch::poll
