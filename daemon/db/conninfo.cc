#include "db/conninfo.h"

#include <libpq-fe.h>

#include <memory>
#include <stdexcept>
#include <vector>

#include "db/libpq_options.h"

namespace seatwatch::db {

namespace {

LibpqOptions Parse(const std::string& dsn) {
  std::string message;
  LibpqOptions options = ParseLibpqOptions(dsn, &message);
  if (!options) {
    // libpq quotes the fragment it refuses, which may be a password.
    throw std::invalid_argument("cannot parse database DSN: " + ScrubDsnSecrets(message, dsn));
  }
  return options;
}

// Rounds up: libpq's connect_timeout is whole seconds (and at least 2).
std::string Seconds(std::chrono::milliseconds value) {
  long long seconds = (value.count() + 999) / 1000;
  if (seconds < 2) seconds = 2;
  return std::to_string(seconds);
}

// TCP keepalives and tcp_user_timeout, unless the DSN sets its own: a peer
// that is gone (a host down, a partition) then breaks the connection within
// about half a minute instead of the kernel's two hours, also while libpq
// waits for a result. (A middlebox that stalls with the socket open still
// answers keepalives: the poller's statement watchdog covers that.) libpq
// ignores these on Unix sockets.
std::string TcpDeadlines(const PQconninfoOption* options, const SessionSettings& settings) {
  auto given = [options](const std::string& key) {
    for (const PQconninfoOption* option = options; option->keyword; ++option) {
      if (key == option->keyword) return option->val != nullptr;
    }
    return false;
  };
  long long user_timeout_ms = settings.statement_timeout.count() + kTcpUserTimeoutMargin.count();
  std::string out;
  if (!given("keepalives")) out += "keepalives=1 ";
  if (!given("keepalives_idle")) out += "keepalives_idle=10 ";
  if (!given("keepalives_interval")) out += "keepalives_interval=5 ";
  if (!given("keepalives_count")) out += "keepalives_count=3 ";
  if (!given("tcp_user_timeout")) out += "tcp_user_timeout=" + std::to_string(user_timeout_ms) + " ";
  return out;
}

// libpq judges "read-write" and "read-only" by the session's
// default_transaction_read_only, which a read-only seatwatch session sets on
// itself: "read-write" would then refuse every server, the primary too, and
// "read-only" accept every one. What the DSN asks for is the server's role,
// which "primary" and "standby" test (in_hot_standby) whatever the session
// sets; a writable session (the cleanup) keeps the DSN's word.
std::string SessionAttrs(const std::string& wanted, const SessionSettings& settings) {
  if (!settings.read_only) return wanted;
  if (wanted == "read-write") return "primary";
  if (wanted == "read-only") return "standby";
  return wanted;
}

}  // namespace

std::string BuildConninfo(const std::string& dsn, const SessionSettings& settings) {
  LibpqOptions options = Parse(dsn);
  std::string user_options;
  std::string out;
  for (PQconninfoOption* option = options.get(); option->keyword; ++option) {
    if (!option->val) continue;
    std::string key = option->keyword;
    if (key == "application_name" || key == "connect_timeout" || key == "fallback_application_name") {
      continue;
    }
    if (key == "options") {
      user_options = option->val;
      continue;
    }
    if (key == "target_session_attrs") {
      out += key + "=" + QuoteLibpqValue(SessionAttrs(option->val, settings)) + " ";
      continue;
    }
    out += key + "=" + QuoteLibpqValue(option->val) + " ";
  }
  out += "application_name=" + QuoteLibpqValue(settings.application_name) + " ";
  out += "connect_timeout=" + Seconds(settings.connect_timeout) + " ";
  out += TcpDeadlines(options.get(), settings);
  std::string session_options = "-c statement_timeout=" +
                                std::to_string(settings.statement_timeout.count()) +
                                " -c lock_timeout=" + std::to_string(settings.lock_timeout.count());
  // Monitoring queries are short and repeated: JIT compilation would cost
  // more than it saves and makes their timing erratic. Floats as text
  // exactly (the default, whatever the role or database sets): a declared
  // check's balance gate hashes values by their text, and two different
  // floats rounded to one text would balance.
  session_options += " -c jit=off -c extra_float_digits=1";
  if (settings.read_only) session_options += " -c default_transaction_read_only=on";
  if (!user_options.empty()) session_options = user_options + " " + session_options;
  out += "options=" + QuoteLibpqValue(session_options);
  return out;
}

}  // namespace seatwatch::db
