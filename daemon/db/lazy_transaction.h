#pragma once

#include <chrono>
#include <functional>
#include <memory>

#include <pqxx/transaction_base>

namespace seatwatch::db {

// A check's transaction, begun by its first statement rather than before
// the check runs: a check whose every statement an earlier check of the same
// poll already ran (a [[metric]] reading the rows of another check's pass,
// served from the poll's QueryCache) then costs the server no BEGIN, SET
// LOCAL and COMMIT. Nothing is lost by waiting: a transaction takes its
// snapshot at its first statement either way.
//
// Not thread-safe; lives for one check run.
class LazyTransaction {
 public:
  using Open = std::function<std::unique_ptr<pqxx::transaction_base>()>;
  using Prepare = std::function<void(pqxx::transaction_base&)>;

  // `open` begins the transaction (BEGIN ...); `prepare` runs in it first
  // (the SET LOCALs every check transaction carries).
  LazyTransaction(Open open, Prepare prepare);
  // An open transaction, used as it is (tests, callers that hold one).
  explicit LazyTransaction(pqxx::transaction_base& open);
  LazyTransaction(const LazyTransaction&) = delete;
  LazyTransaction& operator=(const LazyTransaction&) = delete;

  // The transaction, begun and prepared on the first call. Throws what
  // `open` or `prepare` throw; a throw from `open` is remembered
  // (failed_to_begin()): nothing of the check has run on the server then.
  pqxx::transaction_base& Get();

  bool failed_to_begin() const { return failed_to_begin_; }

  // Commits what was begun; nothing when nothing was.
  void Commit();

  // The time this transaction waited on the server: its BEGIN and
  // settings, its COMMIT, and what callers counted (each statement, until
  // its rows were read). The caller's own work between them is not.
  double database_seconds() const { return database_seconds_; }
  void CountDatabaseTime(double seconds) { database_seconds_ += seconds; }

 private:
  Open open_;
  Prepare prepare_;
  std::unique_ptr<pqxx::transaction_base> owned_;
  pqxx::transaction_base* tx_ = nullptr;
  bool failed_to_begin_ = false;
  double database_seconds_ = 0;
};

// Counts the time from its making to the end of its scope, however the
// scope ends (a statement that throws waited on the server too), as the
// transaction's database time.
class DatabaseTimer {
 public:
  explicit DatabaseTimer(LazyTransaction& tx)
      : tx_(tx), start_(std::chrono::steady_clock::now()) {}
  ~DatabaseTimer() {
    tx_.CountDatabaseTime(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  }
  DatabaseTimer(const DatabaseTimer&) = delete;
  DatabaseTimer& operator=(const DatabaseTimer&) = delete;

 private:
  LazyTransaction& tx_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace seatwatch::db
