#include <iostream>
#include <set>
#include <string>
#include <vector>

#include <pqxx/connection>
#include <pqxx/nontransaction>
#include <pqxx/transaction>

#include "app/commands.h"
#include "changes/feed_verdict.h"
#include "checks/declared_proof.h"
#include "checks/holds_check.h"
#include "checks/query_entry.h"
#include "checks/scoped_proof.h"
#include "config/describe.h"
#include "config/validate.h"
#include "db/conninfo.h"
#include "db/local_settings.h"
#include "db/pooler_probe.h"
#include "db/savepoint.h"
#include "db/rows.h"
#include "http/tls_validity.h"
#include "metrics/row_mapping.h"

namespace seatwatch::app {

namespace {

// pg_is_in_recovery() of the server behind `connection`.
bool InRecovery(pqxx::connection& connection) {
  pqxx::nontransaction tx(connection, "role");
  return tx.exec1("SELECT pg_is_in_recovery()")[0].as<bool>();
}

const char* Role(bool in_recovery) { return in_recovery ? "a standby (in recovery)" : "a primary"; }

// What the locks lane and the cleanup reach: they need the primary.
void SayPrimaryLanes(bool in_recovery, const std::string& lanes) {
  if (in_recovery) {
    std::cout << "warning: " << lanes
              << " reach a standby (in recovery): the cleanup frees nothing and the change feed is "
                 "off there; point [database] dsn at the primary\n";
  } else {
    std::cout << lanes << " reach a primary\n";
  }
}

// Whether `connection` goes through a connection pooler, said for `lanes`;
// with the cleanup on, that it will not run there. Returns nothing: a pooler
// is supported (see db::PoolerVerdict), the cleanup's refusal a warning.
void SayPooler(pqxx::connection& connection, const db::SessionSettings& settings,
               const std::string& lanes, bool cleanup_here) {
  db::PoolerVerdict verdict;
  try {
    verdict = db::ProbePooler(connection, settings);
  } catch (const std::exception& e) {
    std::cout << lanes << ": cannot tell a direct connection from a pooler: " << e.what() << "\n";
    return;
  }
  if (!verdict.pooled) {
    std::cout << lanes << ": a direct connection (its connection options are in effect)\n";
    return;
  }
  std::cout << lanes << ": " << db::kThroughPooler << " (" << verdict.reason << ")\n";
  if (cleanup_here) {
    std::cout << "warning: [cleanup] is on but [database] dsn goes through a connection pooler: "
                 "the cleanup will not run (its leader lock needs a direct connection)\n";
  }
}

// A connection that failed: why, with the fix when a pooler refused the
// `options` startup parameter. Returns whether it did (--check-config then
// fails: no lane could connect that way).
bool SayUnreachable(const std::string& dsn, const std::string& what, const std::string& note,
                    const std::string& error) {
  std::string message = db::ScrubDsnSecrets(error, dsn);
  while (!message.empty() && message.back() == '\n') message.pop_back();
  std::cout << "database " << db::MaskDsn(dsn) << what << " not reachable" << note << ": "
            << message << "\n";
  auto hint = db::OptionsRefusedHint(message);
  if (hint) {
    std::cout.flush();  // the line above first, also when both go to one pipe
    std::cerr << "seatwatch: " << *hint << "\n";
  }
  return hint.has_value();
}

// With its own [checks] dsn, the checks lane's connection says nothing of
// [database] dsn's server: connect there too. Returns whether a pooler
// refused the connection options.
bool CheckPrimaryLanes(const config::Config& config, const db::SessionSettings& settings) {
  const std::string& dsn = config.database.dsn;
  try {
    pqxx::connection connection(db::BuildConninfo(dsn, settings));
    SayPrimaryLanes(InRecovery(connection), "locks lane, cleanup");
    SayPooler(connection, settings, "locks lane, cleanup", config.cleanup.enabled);
  } catch (const std::exception& e) {
    return SayUnreachable(dsn, " (locks lane, cleanup)", "", e.what());
  }
  return false;
}

// Proves the declared entries against the catalog (see
// checks::ProveDeclarations) and says what it found. Returns the checks
// whose declarations do not prove: their compiled SQL is not run after.
std::set<std::string> ProveDeclarations(pqxx::transaction_base& tx, const config::Config& config,
                                        int* problems) {
  if (config.declared.empty() && config.declared_metrics.empty()) return {};
  checks::DeclaredProof proof;
  try {
    proof = checks::ProveDeclarations(tx, config);
  } catch (const std::exception& e) {
    std::cout << "declarations not proved: the connection broke: "
              << db::ScrubDsnSecrets(e.what(), config.ChecksDsn()) << "\n";
    return {};
  }
  for (const auto& line : proof.proved) std::cout << line << "\n";
  for (const auto& line : proof.warnings) std::cout << "warning: " << line << "\n";
  std::cout.flush();  // before the errors, also when both go to one pipe
  for (const auto& line : proof.errors) std::cerr << "seatwatch: " << line << "\n";
  *problems += static_cast<int>(proof.errors.size());
  return proof.failed_checks;
}

// Proves each incremental entry's scoped_sql in `tx` (see
// checks::ProveScopedSql) and says what it found. Returns the problems.
int ProveScopedSql(pqxx::transaction_base& tx, const std::vector<config::QueryConfig>& entries,
                   const std::string& dsn) {
  checks::ScopedProof proof;
  try {
    proof = checks::ProveScopedSql(tx, entries);
  } catch (const std::exception& e) {
    std::cout << "scoped_sql not proved: the connection broke: "
              << db::ScrubDsnSecrets(e.what(), dsn) << "\n";
    return 0;
  }
  for (const auto& line : proof.proved) std::cout << line << "\n";
  for (const auto& line : proof.notes) std::cout << line << "\n";
  for (const auto& line : proof.warnings) std::cout << "warning: " << line << "\n";
  std::cout.flush();  // before the errors, also when both go to one pipe
  for (const auto& line : proof.failed) std::cerr << "seatwatch: " << line << "\n";
  for (const auto& line : proof.refuted) std::cerr << "seatwatch: " << line << "\n";
  return static_cast<int>(proof.failed.size() + proof.refuted.size());
}

}  // namespace

int CheckConfigCommand(const config::Config& config) {
  std::cout << config.path << ": syntax and values OK (" << config.queries.size()
            << " query entries)\n";
  for (const auto& line : config::DescribeLanes(config)) std::cout << line << "\n";
  for (const auto& line : config::LaneWarnings(config)) std::cout << line << "\n";
  for (const auto& line : config::DescribeIncremental(config)) std::cout << line << "\n";
  std::cout << config::DescribeHttp(config) << "\n";
  for (const auto& line : config::HttpWarnings(config, http::UnixNowSeconds())) std::cout << line << "\n";
  // From the database: why incremental mode is off (wal_level, REPLICATION,
  // the publication), or what it cannot map.
  if (config.changes.enabled) std::cout << changes::CheckFeed(config) << "\n";
  db::SessionSettings settings = config::SettingsOf(config.database);
  // The entries and [holds] run on the checks lane: their columns are
  // proved where that lane reads ([checks] dsn, else [database] dsn). The
  // config's DSN was proved usable when it was loaded; a DSN libpq cannot
  // parse is still a config error here, never "not reachable".
  const std::string& dsn = config.ChecksDsn();
  const char* key = config.checks.dsn.empty() ? "database.dsn" : "checks.dsn";
  std::string conninfo;
  try {
    conninfo = db::BuildConninfo(dsn, settings);
  } catch (const std::exception& e) {
    std::cerr << "seatwatch: " << key << ": " << e.what() << "\n";
    return 2;
  }
  std::unique_ptr<pqxx::connection> connection;
  try {
    connection = std::make_unique<pqxx::connection>(conninfo);
  } catch (const std::exception& e) {
    bool refused = SayUnreachable(dsn, config.checks.dsn.empty() ? "" : " (checks lane)",
                                  "; query columns not verified", e.what());
    if (!config.checks.dsn.empty() && config.checks.dsn != config.database.dsn) {
      refused = CheckPrimaryLanes(config, settings) || refused;
    }
    return refused ? 2 : 0;
  }
  bool shared = config.checks.dsn.empty() || config.checks.dsn == config.database.dsn;
  try {
    bool in_recovery = InRecovery(*connection);
    std::cout << "checks lane reaches " << Role(in_recovery) << "\n";
    if (shared) SayPrimaryLanes(in_recovery, "locks lane, cleanup");
  } catch (const std::exception& e) {
    std::cout << "checks lane: cannot tell a primary from a standby: " << db::ScrubDsnSecrets(e.what(), dsn)
              << "\n";
  }
  SayPooler(*connection, settings, shared ? "checks lane, locks lane, cleanup" : "checks lane",
            shared && config.cleanup.enabled);
  int problems = 0;
  if (!shared && CheckPrimaryLanes(config, settings)) ++problems;
  pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> tx(*connection, "seatwatch_verify");
  // As every check transaction does (see poll/check_runner.h): the
  // connection options may have been dropped by a pooler.
  db::SetLocal(tx, {settings.statement_timeout, settings.lock_timeout});
  std::set<std::string> unproved = ProveDeclarations(tx, config, &problems);
  std::vector<config::QueryConfig> proved;  // the entries whose SQL is run
  for (const auto& entry : config.queries) {
    if (!(entry.compiled && unproved.count(entry.pass_of))) proved.push_back(entry);
  }
  for (const auto& entry : proved) {
    try {
      db::Savepoint savepoint(tx, "seatwatch_verify");
      checks::VerifyEntryColumns(tx, entry);
      savepoint.Release();
    } catch (const checks::EntryMismatch& e) {
      std::cerr << "seatwatch: " << e.what() << "\n";
      ++problems;
    } catch (const std::exception& e) {
      const char* section =
          entry.kind == config::QueryConfig::Kind::kInvariant ? "invariant" : "metric";
      std::cerr << "seatwatch: " << entry.KeyLocation("sql").Describe(std::string(section) + ".sql")
                << ": " << entry.sql_path << ": " << e.what() << "\n";
      ++problems;
    }
  }
  if (config.holds.enabled) {
    try {
      db::Savepoint savepoint(tx, "seatwatch_verify");
      db::Rows rows = db::ToRows(
          tx.exec("SELECT * FROM (\n" + config.holds.sql + "\n) AS seatwatch_verify LIMIT 0"));
      for (const auto& column : checks::HoldsColumns()) {
        if (rows.ColumnIndex(column) < 0) {
          throw metrics::MissingColumn("sql", column, rows.columns);
        }
      }
      savepoint.Release();
    } catch (const std::exception& e) {
      std::cerr << "seatwatch: " << config.holds.where.Describe("holds.sql") << ": "
                << config.holds.sql_path << ": " << e.what() << "\n";
      ++problems;
    }
  }
  problems += ProveScopedSql(tx, proved, config.ChecksDsn());
  if (problems > 0) return 2;
  std::cout << "every query runs and returns its configured columns\n";
  return 0;
}

}  // namespace seatwatch::app
