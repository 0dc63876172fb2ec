#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <pqxx/connection>

#include "db/backoff.h"
#include "db/conninfo.h"

namespace seatwatch::db {

// idle_session_timeout exists from PostgreSQL 14 (server_version 140000).
bool IdleSessionTimeoutSupported(int server_version);

// Owns one database connection with seatwatch's settings baked into its
// connection string, and reconnects with capped backoff when it is lost.
// libpqxx's silent reactivation is switched off so that a reconnect is always
// ours, logged and counted; so a session SET made at connect survives as long
// as the connection (idle_session_timeout = 0, see Connection()), unless the
// connection goes through a pooler (pooled()), which each connect asks. Not
// thread-safe: one owner thread (a StatementWatchdog may hold a reference to
// the connection, see shared_connection()).
class Session {
 public:
  using Clock = std::chrono::steady_clock;

  Session(std::string dsn, SessionSettings settings, std::chrono::milliseconds max_backoff);
  ~Session();

  // The live connection, connecting first if needed. Throws
  // pqxx::broken_connection when it cannot connect or when the backoff after
  // the last failure has not yet passed (no attempt is made then).
  pqxx::connection& Connection();

  // The live connection as a shared reference, for a StatementWatchdog that
  // may have to cancel its statement from another thread; null when not
  // connected.
  std::shared_ptr<pqxx::connection> shared_connection() const { return connection_; }

  // After any error that may have broken the connection: checks it and drops
  // it if it is gone, so that the next Connection() reconnects.
  void CheckAfterError();
  void Disconnect();

  bool connected() const { return connection_ != nullptr; }
  // Whether the current connection goes through a connection pooler (see
  // PoolerVerdict): statements may then run on different server connections,
  // so nothing session-level may be relied on. Read on every connect.
  bool pooled() const { return pooled_; }
  int backend_pid() const { return backend_pid_; }
  const std::string& masked_dsn() const { return masked_dsn_; }
  const SessionSettings& settings() const { return settings_; }
  Clock::time_point next_attempt() const { return next_attempt_; }

 private:
  std::string conninfo_;
  std::string masked_dsn_;
  DsnSecrets secrets_;  // scrubs libpq's connection errors, which may quote the DSN
  SessionSettings settings_;
  Backoff backoff_;
  std::shared_ptr<pqxx::connection> connection_;
  Clock::time_point next_attempt_{};
  int backend_pid_ = 0;
  bool was_connected_ = false;
  bool pooled_ = false;
  bool announced_pooler_ = false;  // logged once per session, not per reconnect
};

}  // namespace seatwatch::db
