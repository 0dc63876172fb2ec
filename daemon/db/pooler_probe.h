#pragma once

#include <chrono>
#include <optional>
#include <string>

#include <pqxx/connection>

#include "db/conninfo.h"

namespace seatwatch::db {

// What the server says of a new session, read in one statement right after
// connecting: its backend pid and the settings seatwatch sent in libpq's
// `options` startup parameter.
struct SessionFacts {
  int backend_pid = 0;                       // pg_backend_pid()
  std::chrono::milliseconds statement_timeout{0};
  std::chrono::milliseconds lock_timeout{0};
  bool read_only = false;                    // default_transaction_read_only
};

// How a session reaches the server. A pooler (PgBouncer, ...) hands the
// client a backend pid of its own making at connect, so the pid libpq was
// given differs from pg_backend_pid(); one told to ignore the `options`
// startup parameter (PgBouncer's ignore_startup_parameters = options) drops
// the timeouts and read-only seatwatch asked for, so the role's defaults are
// in force instead. Either way statements of one session may run on
// different server connections: only what a transaction sets for itself
// (SET LOCAL) holds, and nothing session-level (a SET, a named prepared
// statement, an advisory lock) may be relied on.
struct PoolerVerdict {
  bool pooled = false;
  bool options_dropped = false;
  // Why, for logs and --check-config; empty for a direct connection.
  std::string reason;
};

// Pure: the verdict for a session that connected with `settings`, whose
// libpq backend pid was `libpq_pid`, and of which the server said `facts`.
PoolerVerdict JudgePooler(const SessionSettings& settings, int libpq_pid,
                          const SessionFacts& facts);

// Reads SessionFacts on `connection` (one statement, outside any
// transaction) and judges them. Throws what libpqxx throws.
PoolerVerdict ProbePooler(pqxx::connection& connection, const SessionSettings& settings);

// The fix, when libpq's connection error says that a pooler refused the
// `options` startup parameter (PgBouncer's default); nullopt otherwise.
std::optional<std::string> OptionsRefusedHint(const std::string& connect_error);

// What seatwatch does through a pooler, as logs and --check-config say it.
inline constexpr const char* kThroughPooler =
    "through a transaction pooler: timeouts and read-only are set per transaction (SET LOCAL); "
    "the change feed and the cleanup need a direct connection";

}  // namespace seatwatch::db
