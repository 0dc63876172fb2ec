#include "db/session.h"

#include <pqxx/except>
#include <pqxx/nontransaction>

#include "db/liveness.h"
#include "db/pooler_probe.h"
#include "util/log.h"

namespace seatwatch::db {

namespace {

// A role or database setting of idle_session_timeout (PostgreSQL 14+) shorter
// than the poll interval would close the session between every two polls.
// The monitor's session is idle by design, so it opts out. A SET rather than
// "-c" in the connection options: an unknown parameter there is FATAL at
// connect on servers before 14. Failure to SET is logged, not fatal: the
// poller reconnects at once when a session was closed while idle.
void DisableIdleSessionTimeout(pqxx::connection& connection, const std::string& masked_dsn) {
  if (!IdleSessionTimeoutSupported(connection.server_version())) return;
  try {
    pqxx::nontransaction tx(connection, "seatwatch_session");
    tx.exec0("SET idle_session_timeout = 0");
  } catch (const pqxx::broken_connection&) {
    throw;
  } catch (const std::exception& e) {
    log::Warn("cannot turn off idle_session_timeout for the monitor's session",
              {{"dsn", masked_dsn}, {"error", e.what()}});
  }
}

}  // namespace

bool IdleSessionTimeoutSupported(int server_version) { return server_version >= 140000; }

Session::Session(std::string dsn, SessionSettings settings, std::chrono::milliseconds max_backoff)
    : conninfo_(BuildConninfo(dsn, settings)),
      masked_dsn_(MaskDsn(dsn)),
      secrets_(dsn),
      settings_(std::move(settings)),
      backoff_(max_backoff) {}

Session::~Session() { Disconnect(); }

pqxx::connection& Session::Connection() {
  // A connection the server closed while idle is found here, before a
  // statement on it fails and libpqxx leaks that statement's result.
  if (connection_ && StillConnected(*connection_)) return *connection_;
  CheckAfterError();
  connection_.reset();
  auto now = Clock::now();
  if (now < next_attempt_) {
    throw pqxx::broken_connection("not connected; next attempt in " +
                                  std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                     next_attempt_ - now)
                                                     .count()) +
                                  "ms");
  }
  try {
    auto connection = std::make_unique<pqxx::connection>(conninfo_);
    // Deprecated in 6.4 but still effective: without it libpqxx may reopen a
    // broken connection behind our back, skipping backoff and logging.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    connection->inhibit_reactivation(true);
#pragma GCC diagnostic pop
    PoolerVerdict pooler = ProbePooler(*connection, settings_);
    // Behind a pooler a session SET would stay on a server connection
    // shared with other clients (and PgBouncer closes idle ones itself).
    if (!pooler.pooled) DisableIdleSessionTimeout(*connection, masked_dsn_);
    if (pooler.pooled && !announced_pooler_) {
      log::Info("database connection goes through a connection pooler; timeouts and read-only "
                "are set per transaction (SET LOCAL)",
                {{"dsn", masked_dsn_},
                 {"application_name", settings_.application_name},
                 {"reason", pooler.reason}});
    }
    announced_pooler_ = announced_pooler_ || pooler.pooled;
    pooled_ = pooler.pooled;
    backend_pid_ = connection->backendpid();
    connection_ = std::move(connection);
    backoff_.Reset();
    log::Info(was_connected_ ? "reconnected to database" : "connected to database",
              {{"dsn", masked_dsn_},
               {"application_name", settings_.application_name},
               {"backend_pid", std::to_string(backend_pid_)}});
    was_connected_ = true;
    return *connection_;
  } catch (const std::exception& e) {
    auto wait = backoff_.Next();
    next_attempt_ = Clock::now() + wait;
    std::string message = secrets_.Scrub(e.what());
    while (!message.empty() && message.back() == '\n') message.pop_back();
    if (auto hint = OptionsRefusedHint(message)) message += " (" + *hint + ")";
    // Log the first failure and then every few, so a long outage is visible
    // without flooding the log.
    if (backoff_.attempts() <= 1 || backoff_.attempts() % 10 == 0) {
      log::Warn("cannot connect to database",
                {{"dsn", masked_dsn_},
                 {"error", message},
                 {"attempt", std::to_string(backoff_.attempts())},
                 {"retry_in_ms", std::to_string(wait.count())}});
    }
    throw pqxx::broken_connection(message);
  }
}

void Session::CheckAfterError() {
  if (connection_ && !connection_->is_open()) {
    log::Warn("lost database connection", {{"dsn", masked_dsn_}});
    connection_.reset();
    next_attempt_ = Clock::now();  // the first reconnect is immediate; backoff after that
  }
}

void Session::Disconnect() {
  if (!connection_) return;
  // A watchdog's cancel in flight still holds the connection: the last
  // holder closes it, never this thread under its feet.
  if (connection_.use_count() > 1) {
    connection_.reset();
    return;
  }
  try {
    connection_->disconnect();
  } catch (const std::exception& e) {
    log::Debug("error while disconnecting", {{"error", e.what()}});
  }
  connection_.reset();
}

}  // namespace seatwatch::db
