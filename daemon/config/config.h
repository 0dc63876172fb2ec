#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "declare/declaration.h"
#include "declare/metric_declaration.h"
#include "declare/row_terms.h"

namespace seatwatch::config {

using Millis = std::chrono::milliseconds;
using namespace std::chrono_literals;

// Where a key was written, so that errors found after parsing (a column the
// query does not return) still name file, line and key.
struct Location {
  std::string file;
  int line = 0;
  int column = 0;

  std::string Describe(const std::string& key) const;
};

struct DatabaseConfig {
  std::string dsn = "postgresql:///booking";
  std::string application_name = "seatwatch";
  Millis connect_timeout = 5s;
  Millis statement_timeout = 5s;
  Millis lock_timeout = 100ms;
  Millis reconnect_max_backoff = 10s;
};

struct HttpConfig {
  std::string listen = "127.0.0.1:9646";
  // TLS: all three files resolved against the config file's folder; the
  // PEM texts read by LoadConfig (LoadHttpFiles). A cert turns TLS on.
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string tls_client_ca_file;  // set: client certificates are required
  std::string tls_cert_pem;
  std::string tls_key_pem;
  std::string tls_client_ca_pem;
  enum class TlsVersion { kTls12, kTls13 };
  TlsVersion tls_min_version = TlsVersion::kTls12;
  // [http.basic_auth] users: name -> bcrypt hash. None: no authentication.
  std::map<std::string, std::string> basic_auth_users;
  // /healthz and /readyz answer without credentials.
  bool auth_exempt_probes = true;
  std::map<std::string, Location> keys;  // each key as written ("tls_cert_file", ...)

  bool tls() const { return !tls_cert_file.empty(); }
  Location KeyLocation(const std::string& key) const;
};

struct PollConfig {
  Millis interval = 10s;
};

// One [[invariant]] or [[metric]] entry: a SQL file whose rows become samples.
struct QueryConfig {
  enum class Kind { kInvariant, kMetric };
  Kind kind = Kind::kInvariant;
  std::string name;
  std::string help;
  std::string sql_path;  // resolved against the config file's folder
  std::string sql;       // the file's text, trailing semicolons removed
  std::vector<std::string> labels;
  std::string value;
  std::vector<std::string> params;
  std::optional<Millis> interval;
  // Rows the query may return, all of them (also rows of other entries that
  // share the query); one more fails the check with too_many_rows.
  int max_rows = 100000;
  // Invariants only. Empty invariant_column: the entry is one invariant named
  // `name`. Otherwise each row names one of `invariants` in that column.
  std::string invariant_column;
  std::vector<std::string> invariants;
  std::map<std::string, std::string> detail_sql_path;  // invariant -> file
  std::map<std::string, std::string> detail_sql;       // invariant -> text
  // What the status page shows with a violated invariant: its own help
  // (invariant -> text; `help` for those not listed) and a link to its
  // runbook entry: runbook_url with "#<invariant>" appended, or as written
  // when it has a fragment of its own. Empty: no link.
  std::map<std::string, std::string> invariant_help;
  std::string runbook_url;
  std::string HelpOf(const std::string& invariant) const;
  std::string RunbookOf(const std::string& invariant) const;

  // Incremental mode (all of key, tables and scoped_sql, or none). `key` is
  // one of `labels`; `tables` maps each watched table ("seats", or
  // "schema.seats" to match one schema only) to its column holding the key.
  // scoped_sql gets the dirty keys as $1 (a text[] literal), then `params`.
  std::string key;
  std::map<std::string, std::string> tables;
  std::string scoped_sql_path;  // resolved against the config file's folder
  std::string scoped_sql;       // the file's text, trailing semicolons removed
  // Optional: a float8 column of unix seconds, each key's next change by
  // time alone (a hold expiring); the key is rechecked when it passes.
  std::string expiry_column;
  // True once the SQL files are read (LoadConfig, LoadSqlFiles); after
  // ParseConfig alone, scoped_sql_path says whether the entry asked for it.
  bool incremental() const { return !scoped_sql.empty(); }
  // Whether the entry asked for incremental mode, before or after the SQL
  // files are read.
  bool AsksIncremental() const { return !scoped_sql_path.empty() || !scoped_sql.empty(); }

  // Compiled from declarations ([[invariant]] entries with `kind`): the SQL
  // is generated, not read; `declared` names each invariant's kind.
  bool compiled = false;
  std::string pass_of;                           // the check whose pass it reads
  std::map<std::string, std::string> declared;  // invariant -> kind
  std::string not_incremental;                   // why a compiled check runs full passes only
  // A compiled incremental check's rows as sums over its tables' rows:
  // rechecks follow a hot key row by row (checks/RowLedger); null when it
  // cannot (not_row_wise says why) or is hand-written.
  std::shared_ptr<const declare::RowTerms> row_terms;
  std::string not_row_wise;

  Location where;                         // the [[...]] header
  std::map<std::string, Location> keys;   // each key as written
  const Location& KeyLocation(const std::string& key) const;
};

// Where each key of a declared entry was written, so that an error found
// after parsing (by a kind's rules, the compiler or the database) names it.
struct DeclaredFields {
  std::string check;  // default: the entry's name
  std::string help;
  Location where;                        // the [[...]] header
  std::map<std::string, Location> keys;  // "kind", "rows.where", ...
  // Where `field` ("rows.columns") was written: the key, else its table,
  // else the entry's header.
  const Location& FieldLocation(const std::string& field) const;
};

// One [[invariant]] entry with `kind`, as parsed: the declaration and what
// the daemon needs beside it. CompileDeclarations lowers the entries of each
// check into one QueryConfig.
struct DeclaredEntry : DeclaredFields {
  declare::Declaration declaration;
  std::string runbook_url;
  std::optional<Millis> interval;
  std::optional<int> max_rows;
  std::string detail_sql_path;  // resolved; empty: the compiled detail query
};

// One [[metric]] entry with `kind`, as parsed. CompileDeclarations puts its
// tallies into the pass of its check and gives it a QueryConfig of its own
// reading that pass's result.
struct DeclaredMetric : DeclaredFields {
  declare::MetricDeclaration metric;
  std::string kind;  // "count"; its check by default: a pass of its own
  std::optional<Millis> interval;
  std::optional<int> max_rows;
};

struct LocksConfig {
  bool enabled = true;
  Millis interval = 2s;
  Millis statement_timeout = 1s;
  Millis log_threshold = 5s;
  std::vector<std::string> resolve_rows;  // tables whose hot rows are named by key
  Location where;  // the [locks] table; line 0 when the file has none
  // Other sessions' query text in /api/locks, --once and the lock wait log
  // lines: literals replaced by placeholders, as sent, or not at all.
  enum class ShowQuery { kNone, kNormalized, kRaw };
  ShowQuery show_query = ShowQuery::kNormalized;
  int query_max_length = 512;  // characters, counted after normalizing
};

struct HoldsConfig {
  bool enabled = false;
  std::string sql_path;
  std::string sql;
  std::optional<Millis> interval;
  Location where;
};

struct CleanupConfig {
  bool enabled = false;
  std::string sql_path;
  std::string sql;
  std::string dry_run_sql_path;
  std::string dry_run_sql;
  Millis interval = 30s;
  int batch_size = 500;
  int max_batches = 100;
  Millis batch_pause = 50ms;
  Millis lock_timeout = 50ms;
  Millis statement_timeout = 2s;
  bool dry_run = false;
  Location where;
};

// [changes]: the logical decoding feed that incremental entries read.
struct ChangesConfig {
  bool enabled = false;
  std::string dsn;  // empty: [database] dsn; SEATWATCH_CHANGES_DSN overrides
  std::string publication = "seatwatch";
  std::string slot_prefix = "seatwatch";  // temporary slot "<prefix>_<pid>_<n>"
  Millis interval = 200ms;                // drain + recheck cadence
  // The rechecks' time allowed per minute (poll::RecheckBudget): a cycle
  // whose rechecks took longer holds the next one back.
  Millis recheck_time_per_minute = 1s;
  Millis full_pass_interval = 1h;         // backstop
  Millis statement_timeout = 5s;          // every statement of the slot session
  Millis create_timeout = 5s;             // creating the slot waits for running writers
  int max_changes = 100000;               // upto_nchanges of one drain
  Location where;                         // the [changes] table; line 0 when the file has none
};

// [checks]: where the checks lane (invariants, metrics, holds) reads. Its
// dsn may point at a streaming standby (or a multi-host DSN with
// target_session_attrs=prefer-standby) so that the primary never pays for
// the heavy checks; the locks lane, the cleanup and the change feed always
// use [database] dsn (or [changes] dsn), which must reach the primary.
struct ChecksConfig {
  std::string dsn;  // empty: [database] dsn; SEATWATCH_CHECKS_DSN overrides
  Location where;   // the [checks] table; line 0 when the file has none
};

struct Config {
  std::string path;
  std::string log_level = "info";
  // A file that configures no checks is refused unless it sets this (an
  // empty file on SIGHUP must not silently drop every check).
  bool allow_no_checks = false;
  DatabaseConfig database;
  HttpConfig http;
  PollConfig poll;
  std::vector<QueryConfig> queries;
  std::vector<DeclaredEntry> declared;  // compiled into `queries` when parsed
  std::vector<DeclaredMetric> declared_metrics;  // the same
  LocksConfig locks;
  HoldsConfig holds;
  CleanupConfig cleanup;
  ChangesConfig changes;
  ChecksConfig checks;

  Millis IntervalOf(const QueryConfig& query) const {
    return query.interval.value_or(poll.interval);
  }
  // The DSN of the checks lane's session.
  const std::string& ChecksDsn() const { return checks.dsn.empty() ? database.dsn : checks.dsn; }
  // The DSN of the change feed's slot session.
  const std::string& ChangesDsn() const { return changes.dsn.empty() ? database.dsn : changes.dsn; }
};

}  // namespace seatwatch::config
