#include "poll/check_runner.h"

#include <pqxx/transaction>

#include "checks/query_entry.h"
#include "db/savepoint.h"
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

// SET LOCAL as well as the connection options: correct even if the options
// were lost or a check needs a shorter timeout than the session's.
void SetLocalTimeouts(pqxx::transaction_base& tx, const TransactionSettings& settings) {
  tx.exec0("SET LOCAL statement_timeout = " + std::to_string(settings.statement_timeout.count()) +
           "; SET LOCAL lock_timeout = " + std::to_string(settings.lock_timeout.count()));
}

// Only the timeouts that differ from the session's connection options, which
// are in force in every transaction already and survive any reconnect.
void SetLocalChanges(pqxx::transaction_base& tx, const TransactionSettings& wanted,
                     const TransactionSettings& session) {
  std::string sql;
  if (wanted.statement_timeout != session.statement_timeout) {
    sql += "SET LOCAL statement_timeout = " + std::to_string(wanted.statement_timeout.count());
  }
  if (wanted.lock_timeout != session.lock_timeout) {
    if (!sql.empty()) sql += "; ";
    sql += "SET LOCAL lock_timeout = " + std::to_string(wanted.lock_timeout.count());
  }
  if (!sql.empty()) tx.exec0(sql);
}

void RunOne(pqxx::transaction_base& tx, db::QueryCache& cache, ScheduledCheck& entry) {
  auto start = Clock::now();
  try {
    db::Savepoint savepoint(tx, "seatwatch_check");
    checks::CheckContext context{tx, cache, std::chrono::system_clock::now()};
    checks::CheckOutput output = entry.check->Run(context);
    savepoint.Release();
    RecordSuccess(entry, std::move(output), SecondsSince(start), UnixNow());
  } catch (const checks::EntryMismatch& e) {
    log::Error("check does not match its configuration", {{"check", entry.status.name}, {"error", e.what()}});
    RecordFailure(entry, db::FailureReason::kSql, e.what(), SecondsSince(start));
  } catch (const std::exception& e) {
    RecordFailure(entry, db::ClassifyException(e), e.what(), SecondsSince(start));
  }
}

}  // namespace

void FailAll(const std::vector<ScheduledCheck*>& group, db::FailureReason reason,
             const std::string& message) {
  for (ScheduledCheck* entry : group) RecordFailure(*entry, reason, message, 0);
}

void RunSnapshotGroup(pqxx::connection& connection, const std::vector<ScheduledCheck*>& group,
                      const TransactionSettings& settings, const std::function<bool()>& stopping) {
  size_t done = 0;
  try {
    pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> tx(connection, "seatwatch_poll");
    SetLocalTimeouts(tx, settings);
    db::QueryCache cache;
    for (ScheduledCheck* entry : group) {
      if (stopping()) break;
      RunOne(tx, cache, *entry);
      ++done;
    }
    tx.commit();
  } catch (const std::exception& e) {
    // The transaction itself failed (begin, SET or commit): the checks not
    // yet run could not run.
    std::vector<ScheduledCheck*> rest(group.begin() + static_cast<long>(done), group.end());
    if (stopping()) return;
    FailAll(rest, db::ClassifyException(e), e.what());
  }
}

void RunOwnTransaction(pqxx::connection& connection, ScheduledCheck& entry,
                       const TransactionSettings& session) {
  auto start = Clock::now();
  try {
    pqxx::transaction<pqxx::read_committed, pqxx::read_only> tx(connection, "seatwatch_check");
    TransactionSettings own = session;
    if (auto timeout = entry.check->statement_timeout()) own.statement_timeout = *timeout;
    SetLocalChanges(tx, own, session);
    db::QueryCache cache;
    checks::CheckContext context{tx, cache, std::chrono::system_clock::now()};
    checks::CheckOutput output = entry.check->Run(context);
    tx.commit();
    RecordSuccess(entry, std::move(output), SecondsSince(start), UnixNow());
  } catch (const std::exception& e) {
    RecordFailure(entry, db::ClassifyException(e), e.what(), SecondsSince(start));
  }
}

}  // namespace seatwatch::poll
