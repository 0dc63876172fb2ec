#include "db/pooler_probe.h"

#include <pqxx/nontransaction>

namespace seatwatch::db {

namespace {

// pg_settings gives both timeouts in their base unit, milliseconds.
constexpr const char* kSessionFactsSql =
    "SELECT pg_backend_pid(), "
    "(SELECT setting::bigint FROM pg_settings WHERE name = 'statement_timeout'), "
    "(SELECT setting::bigint FROM pg_settings WHERE name = 'lock_timeout'), "
    "current_setting('default_transaction_read_only') = 'on'";

std::string Millis(std::chrono::milliseconds value) { return std::to_string(value.count()) + "ms"; }

}  // namespace

PoolerVerdict JudgePooler(const SessionSettings& settings, int libpq_pid,
                          const SessionFacts& facts) {
  PoolerVerdict verdict;
  std::string dropped;
  auto differs = [&dropped](const std::string& name, const std::string& wanted,
                            const std::string& found) {
    if (wanted == found) return;
    if (!dropped.empty()) dropped += ", ";
    dropped += name + " " + found + " (not " + wanted + ")";
  };
  differs("statement_timeout", Millis(settings.statement_timeout), Millis(facts.statement_timeout));
  differs("lock_timeout", Millis(settings.lock_timeout), Millis(facts.lock_timeout));
  // A writable session (the cleanup) sends no read-only setting, so the
  // role's default_transaction_read_only may stand there.
  if (settings.read_only) {
    differs("default_transaction_read_only", "on", facts.read_only ? "on" : "off");
  }
  verdict.options_dropped = !dropped.empty();
  bool other_pid = libpq_pid != facts.backend_pid;
  verdict.pooled = other_pid || verdict.options_dropped;
  if (other_pid) {
    verdict.reason = "the backend pid given at connect (" + std::to_string(libpq_pid) +
                     ") is not the server's (" + std::to_string(facts.backend_pid) + ")";
  }
  if (verdict.options_dropped) {
    if (!verdict.reason.empty()) verdict.reason += "; ";
    verdict.reason += "the connection options were not applied: " + dropped;
  }
  return verdict;
}

PoolerVerdict ProbePooler(pqxx::connection& connection, const SessionSettings& settings) {
  pqxx::nontransaction tx(connection, "seatwatch_pooler_probe");
  pqxx::row row = tx.exec1(kSessionFactsSql);
  SessionFacts facts;
  facts.backend_pid = row[0].as<int>();
  facts.statement_timeout = std::chrono::milliseconds(row[1].as<long long>());
  facts.lock_timeout = std::chrono::milliseconds(row[2].as<long long>());
  facts.read_only = row[3].as<bool>();
  return JudgePooler(settings, connection.backendpid(), facts);
}

std::optional<std::string> OptionsRefusedHint(const std::string& connect_error) {
  if (connect_error.find("unsupported startup parameter: options") == std::string::npos) {
    return std::nullopt;
  }
  return std::string(
      "a connection pooler (PgBouncer) refuses libpq's options startup parameter, which "
      "carries seatwatch's timeouts and read-only: set ignore_startup_parameters = options in "
      "pgbouncer.ini (seatwatch then sets them per transaction with SET LOCAL)");
}

}  // namespace seatwatch::db
