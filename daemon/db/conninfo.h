#pragma once

#include <chrono>
#include <string>

#include "db/dsn_mask.h"  // MaskDsn, DsnSecrets: what of a DSN may be shown

namespace seatwatch::db {

// What every seatwatch session sets at connect time. These go into the
// connection string itself (libpq `options`), not a session SET, so that they
// survive any reconnect and cannot be forgotten by a code path.
struct SessionSettings {
  std::string application_name;
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds statement_timeout{5000};
  std::chrono::milliseconds lock_timeout{100};
  bool read_only = true;  // default_transaction_read_only: the monitor cannot write
};

// Sent data unacknowledged for this long past the statement_timeout breaks a
// TCP connection (tcp_user_timeout).
inline constexpr std::chrono::milliseconds kTcpUserTimeoutMargin{10000};

// Turns a libpq URI or key=value string into a key=value string with the
// settings applied, TCP keepalives and tcp_user_timeout included; keys the
// DSN does not give (host, password, sslmode...) are left for libpq to take
// from PG* variables. A read-only session's target_session_attrs=read-write
// becomes primary, read-only becomes standby (see conninfo.cc). Throws std::invalid_argument with libpq's message
// (password never included) when the DSN does not parse.
std::string BuildConninfo(const std::string& dsn, const SessionSettings& settings);

}  // namespace seatwatch::db
