#include <iostream>

#include <pqxx/connection>
#include <pqxx/transaction>

#include "app/commands.h"
#include "changes/feed_verdict.h"
#include "checks/holds_check.h"
#include "checks/query_entry.h"
#include "config/describe.h"
#include "db/savepoint.h"
#include "db/conninfo.h"
#include "db/rows.h"
#include "metrics/row_mapping.h"

namespace seatwatch::app {

int CheckConfigCommand(const config::Config& config) {
  std::cout << config.path << ": syntax and values OK (" << config.queries.size()
            << " query entries)\n";
  for (const auto& line : config::DescribeIncremental(config)) std::cout << line << "\n";
  std::cout << config::DescribeHttp(config) << "\n";
  // From the database: why incremental mode is off (wal_level, REPLICATION,
  // the publication), or what it cannot map.
  if (config.changes.enabled) std::cout << changes::CheckFeed(config) << "\n";
  db::SessionSettings settings;
  settings.application_name = config.database.application_name;
  settings.connect_timeout = config.database.connect_timeout;
  settings.statement_timeout = config.database.statement_timeout;
  settings.lock_timeout = config.database.lock_timeout;
  // The config's DSN was proved usable when it was loaded; a DSN libpq
  // cannot parse is still a config error here, never "not reachable".
  std::string conninfo;
  try {
    conninfo = db::BuildConninfo(config.database.dsn, settings);
  } catch (const std::exception& e) {
    std::cerr << "seatwatch: database.dsn: " << e.what() << "\n";
    return 2;
  }
  std::unique_ptr<pqxx::connection> connection;
  try {
    connection = std::make_unique<pqxx::connection>(conninfo);
  } catch (const std::exception& e) {
    std::cout << "database " << db::MaskDsn(config.database.dsn)
              << " not reachable; query columns not verified: "
              << db::ScrubDsnSecrets(e.what(), config.database.dsn) << "\n";
    return 0;
  }
  int problems = 0;
  pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> tx(*connection, "seatwatch_verify");
  for (const auto& entry : config.queries) {
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
  if (problems > 0) return 2;
  std::cout << "every query runs and returns its configured columns\n";
  return 0;
}

}  // namespace seatwatch::app
