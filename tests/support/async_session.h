#pragma once

#include <libpq-fe.h>

#include <string>

namespace seatwatch::testing {

// A libpq session that sends a statement and does not wait for it, so that a
// test can make several sessions block (a holder, its waiters) without a
// thread each. Not thread-safe: one test thread drives it.
class AsyncSession {
 public:
  // Connects to `dsn` as application_name `name`; throws if it cannot.
  AsyncSession(const std::string& dsn, const std::string& name);
  ~AsyncSession();
  AsyncSession(const AsyncSession&) = delete;
  AsyncSession& operator=(const AsyncSession&) = delete;

  // The server process of this session.
  int pid() const { return pid_; }

  // Sends `sql` (one or more statements) and returns at once; throws if it
  // cannot be sent.
  void Send(const std::string& sql);

  // Waits for the statements sent to finish; returns the SQLSTATE of the
  // first error, or "" if all succeeded.
  std::string Finish();

  // Send, then Finish.
  std::string Run(const std::string& sql);

 private:
  PGconn* connection_;
  int pid_ = 0;
};

}  // namespace seatwatch::testing
