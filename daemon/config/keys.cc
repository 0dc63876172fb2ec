#include "config/keys.h"

#include <stdexcept>

#include "config/names.h"
#include "declare/kind_sql.h"
#include "declare/metric_declaration.h"
#include "declare/sql_expression.h"
#include "util/duration.h"

namespace seatwatch::config {

namespace {

// PostgreSQL takes statement_timeout and lock_timeout as an int of
// milliseconds; 0 would disable them, which a monitor must never do.
constexpr long long kMaxTimeoutMs = 2147483647;
// Intervals, pauses and thresholds: a day is already far more than useful.
constexpr long long kMaxIntervalMs = 24LL * 60 * 60 * 1000;
constexpr long long kHourMs = 60LL * 60 * 1000;
// HELP text: a paragraph, not a document.
constexpr size_t kMaxHelpLength = 4096;
// PostgreSQL keeps 63 bytes of application_name; the locks and cleanup
// sessions append "-locks" and "-cleanup", and are found again by that name.
constexpr size_t kMaxApplicationNameLength = kMaxColumnLength - 8;
// The slot name is "<prefix>_<pid>_<n>": with at most 40 bytes of prefix it
// stays within PostgreSQL's 63.
constexpr size_t kMaxChangesNameLength = 40;

std::string Text(Millis value) { return util::FormatDuration(value); }
std::string Text(bool value) { return value ? "true" : "false"; }
std::string Text(int value) { return std::to_string(value); }
std::string Text(const std::string& value) { return value; }
std::string Text(const std::vector<std::string>& value) { return value.empty() ? "[]" : "[...]"; }

std::string Text(LocksConfig::ShowQuery value) {
  switch (value) {
    case LocksConfig::ShowQuery::kNone:
      return "none";
    case LocksConfig::ShowQuery::kRaw:
      return "raw";
    case LocksConfig::ShowQuery::kNormalized:
      break;
  }
  return "normalized";
}

std::string Text(HttpConfig::TlsVersion value) {
  return value == HttpConfig::TlsVersion::kTls13 ? "1.3" : "1.2";
}

KeySpec Plain(std::string name, KeyType type) {
  KeySpec spec;
  spec.name = std::move(name);
  spec.type = type;
  return spec;
}

KeySpec Section(std::string name) { return Plain(std::move(name), KeyType::kSection); }

KeySpec WithDefault(std::string name, KeyType type, const char* default_text,
                    std::string (*value_of)(const Config&)) {
  KeySpec spec = Plain(std::move(name), type);
  spec.default_text = default_text;
  spec.value_of = value_of;
  return spec;
}

KeySpec Bounded(std::string name, KeyType type, const char* default_text, long long min,
                long long max, std::string (*value_of)(const Config&)) {
  KeySpec spec = WithDefault(std::move(name), type, default_text, value_of);
  spec.min = min;
  spec.max = max;
  return spec;
}

KeySpec Limited(KeySpec spec, size_t max_length) {
  spec.max_length = max_length;
  return spec;
}

KeySpec Choice(KeySpec spec, std::vector<std::string> allowed) {
  spec.allowed = std::move(allowed);
  return spec;
}

const QueryConfig& Entry(const Config& config) { return config.queries.at(0); }

// The keys only an [[invariant]] with `kind` takes (parse_declarations.cc).
void AddDeclaredKeys(std::vector<KeySpec>& keys) {
  using K = KeyType;
  auto add = [&keys](KeySpec spec) { keys.push_back(std::move(spec)); };
  add(Choice(Plain("invariant.kind", K::kString), declare::KindNames()));
  add(Limited(Plain("invariant.check", K::kString), kMaxNameLength));
  add(Plain("invariant.rows", K::kSection));
  add(Plain("invariant.rows.table", K::kString));
  add(Plain("invariant.rows.columns", K::kStringArray));
  add(Limited(Plain("invariant.rows.where", K::kString), declare::kMaxExpressionLength));
  add(Limited(Plain("invariant.rows.sum", K::kString), declare::kMaxExpressionLength));
  add(Plain("invariant.rows.expires", K::kString));
  add(Plain("invariant.in", K::kSection));
  add(Plain("invariant.in.table", K::kString));
  add(Plain("invariant.in.columns", K::kStringArray));
  add(Limited(Plain("invariant.in.where", K::kString), declare::kMaxExpressionLength));
  add(Plain("invariant.limit", K::kNumberOrSection));
  add(Plain("invariant.limit.table", K::kString));
  add(Plain("invariant.limit.columns", K::kStringArray));
  add(Plain("invariant.limit.column", K::kString));
  add(Plain("invariant.table", K::kString));
  add(Plain("invariant.columns", K::kStringArray));
  add(Plain("invariant.column", K::kString));
  add(Limited(Plain("invariant.condition", K::kString), declare::kMaxExpressionLength));
}

// The keys only a [[metric]] with `kind` takes (parse_declared_metric.cc).
void AddDeclaredMetricKeys(std::vector<KeySpec>& keys) {
  using K = KeyType;
  auto add = [&keys](KeySpec spec) { keys.push_back(std::move(spec)); };
  add(Choice(Plain("metric.kind", K::kString), declare::MetricKindNames()));
  add(Limited(Plain("metric.check", K::kString), kMaxNameLength));
  add(Plain("metric.label", K::kString));
  add(Plain("metric.counts", K::kTableList));
  add(Plain("metric.counts.name", K::kString));
  add(Plain("metric.counts.table", K::kString));
  add(Plain("metric.counts.columns", K::kStringArray));
  add(Limited(Plain("metric.counts.where", K::kString), declare::kMaxExpressionLength));
  add(Limited(Plain("metric.counts.sum", K::kString), declare::kMaxExpressionLength));
  add(Plain("metric.counts.expires", K::kString));
}

// The keys of one [[invariant]] or [[metric]] entry; `prefix` is either.
void AddEntryKeys(const std::string& prefix, std::vector<KeySpec>& keys) {
  const std::string p = prefix + ".";
  keys.push_back(Plain(prefix, KeyType::kEntryTables));
  keys.push_back(Limited(Plain(p + "name", KeyType::kString), kMaxNameLength));
  keys.push_back(Plain(p + "sql", KeyType::kPath));
  keys.push_back(Limited(Plain(p + "value", KeyType::kString), kMaxColumnLength));
  keys.push_back(Plain(p + "labels", KeyType::kStringArray));
  keys.push_back(Limited(Plain(p + "help", KeyType::kString), kMaxHelpLength));
  keys.push_back(Plain(p + "params", KeyType::kScalarArray));
  // No default of its own: [poll] interval.
  keys.push_back(
      Bounded(p + "interval", KeyType::kDuration, nullptr, 100, kMaxIntervalMs, nullptr));
  keys.push_back(Bounded(p + "max_rows", KeyType::kInteger, "100000", 1, 10000000,
                         [](const Config& c) { return Text(Entry(c).max_rows); }));
  if (prefix == "invariant") {
    keys.push_back(Plain(p + "detail_sql", KeyType::kStringOrTable));
    keys.push_back(Plain(p + "invariant_column", KeyType::kString));
    keys.push_back(Plain(p + "invariants", KeyType::kStringArray));
    keys.push_back(Plain(p + "invariant_help", KeyType::kTable));
    keys.push_back(Limited(Plain(p + "runbook_url", KeyType::kString), kMaxHelpLength));
    AddDeclaredKeys(keys);
  } else {
    AddDeclaredMetricKeys(keys);
  }
  keys.push_back(Plain(p + "key", KeyType::kStringOrArray));
  keys.push_back(Plain(p + "tables", KeyType::kTable));
  keys.push_back(Plain(p + "scoped_sql", KeyType::kPath));
  keys.push_back(Plain(p + "expiry_column", KeyType::kString));
}

std::vector<KeySpec> BuildKeys() {
  using K = KeyType;
  std::vector<KeySpec> keys;
  auto add = [&keys](KeySpec spec) { keys.push_back(std::move(spec)); };

  add(Choice(WithDefault("log_level", K::kString, "info",
                         [](const Config& c) { return Text(c.log_level); }),
             {"debug", "info", "warn", "error"}));
  add(WithDefault("allow_no_checks", K::kBool, "false",
                  [](const Config& c) { return Text(c.allow_no_checks); }));

  add(Section("database"));
  add(WithDefault("database.dsn", K::kString, "postgresql:///booking",
                  [](const Config& c) { return Text(c.database.dsn); }));
  add(Limited(WithDefault("database.application_name", K::kString, "seatwatch",
                          [](const Config& c) { return Text(c.database.application_name); }),
              kMaxApplicationNameLength));
  // libpq reads an int of whole seconds and takes anything below 2 as 2.
  add(Bounded("database.connect_timeout", K::kDuration, "5s", 2000, kHourMs,
              [](const Config& c) { return Text(c.database.connect_timeout); }));
  add(Bounded("database.statement_timeout", K::kDuration, "5s", 1, kMaxTimeoutMs,
              [](const Config& c) { return Text(c.database.statement_timeout); }));
  add(Bounded("database.lock_timeout", K::kDuration, "100ms", 1, kMaxTimeoutMs,
              [](const Config& c) { return Text(c.database.lock_timeout); }));
  add(Bounded("database.reconnect_max_backoff", K::kDuration, "10s", 100, kHourMs,
              [](const Config& c) { return Text(c.database.reconnect_max_backoff); }));

  add(Section("checks"));
  add(WithDefault("checks.dsn", K::kString, "",
                  [](const Config& c) { return Text(c.checks.dsn); }));

  add(Section("http"));
  add(Limited(WithDefault("http.listen", K::kString, "127.0.0.1:9646",
                          [](const Config& c) { return Text(c.http.listen); }),
              kMaxListenLength));
  add(Plain("http.tls_cert_file", K::kPath));
  add(Plain("http.tls_key_file", K::kPath));
  add(Plain("http.tls_client_ca_file", K::kPath));
  add(Choice(WithDefault("http.tls_min_version", K::kString, "1.2",
                         [](const Config& c) { return Text(c.http.tls_min_version); }),
             {"1.2", "1.3"}));
  add(WithDefault("http.auth_exempt_probes", K::kBool, "true",
                  [](const Config& c) { return Text(c.http.auth_exempt_probes); }));
  add(Section("http.basic_auth"));
  add(Plain("http.basic_auth.users", K::kTable));

  add(Section("poll"));
  add(Bounded("poll.interval", K::kDuration, "10s", 100, kMaxIntervalMs,
              [](const Config& c) { return Text(c.poll.interval); }));

  AddEntryKeys("invariant", keys);
  AddEntryKeys("metric", keys);

  add(Section("locks"));
  add(WithDefault("locks.enabled", K::kBool, "true",
                  [](const Config& c) { return Text(c.locks.enabled); }));
  add(Bounded("locks.interval", K::kDuration, "2s", 100, kMaxIntervalMs,
              [](const Config& c) { return Text(c.locks.interval); }));
  add(Bounded("locks.statement_timeout", K::kDuration, "1s", 1, kMaxTimeoutMs,
              [](const Config& c) { return Text(c.locks.statement_timeout); }));
  add(Bounded("locks.log_threshold", K::kDuration, "5s", 0, kMaxIntervalMs,
              [](const Config& c) { return Text(c.locks.log_threshold); }));
  add(WithDefault("locks.resolve_rows", K::kStringArray, "[]",
                  [](const Config& c) { return Text(c.locks.resolve_rows); }));
  add(Choice(WithDefault("locks.show_query", K::kString, "normalized",
                         [](const Config& c) { return Text(c.locks.show_query); }),
             {"normalized", "raw", "none"}));
  add(Bounded("locks.query_max_length", K::kInteger, "512", 0, 1 << 20,
              [](const Config& c) { return Text(c.locks.query_max_length); }));

  add(Section("holds"));
  // Written, the table turns the check on; Config{} has it off.
  add(WithDefault("holds.enabled", K::kBool, "true",
                  [](const Config& c) { return Text(c.holds.enabled); }));
  add(Plain("holds.sql", K::kPath));
  // No default of its own: [poll] interval.
  add(Bounded("holds.interval", K::kDuration, nullptr, 100, kMaxIntervalMs, nullptr));

  add(Section("cleanup"));
  add(WithDefault("cleanup.enabled", K::kBool, "false",
                  [](const Config& c) { return Text(c.cleanup.enabled); }));
  add(Plain("cleanup.sql", K::kPath));
  add(Plain("cleanup.dry_run_sql", K::kPath));
  add(Bounded("cleanup.interval", K::kDuration, "30s", 100, kMaxIntervalMs,
              [](const Config& c) { return Text(c.cleanup.interval); }));
  add(Bounded("cleanup.batch_size", K::kInteger, "500", 1, 100000,
              [](const Config& c) { return Text(c.cleanup.batch_size); }));
  add(Bounded("cleanup.max_batches", K::kInteger, "100", 1, 1000000,
              [](const Config& c) { return Text(c.cleanup.max_batches); }));
  add(Bounded("cleanup.batch_pause", K::kDuration, "50ms", 0, kMaxIntervalMs,
              [](const Config& c) { return Text(c.cleanup.batch_pause); }));
  add(Bounded("cleanup.lock_timeout", K::kDuration, "50ms", 1, kMaxTimeoutMs,
              [](const Config& c) { return Text(c.cleanup.lock_timeout); }));
  add(Bounded("cleanup.statement_timeout", K::kDuration, "2s", 1, kMaxTimeoutMs,
              [](const Config& c) { return Text(c.cleanup.statement_timeout); }));
  add(WithDefault("cleanup.dry_run", K::kBool, "false",
                  [](const Config& c) { return Text(c.cleanup.dry_run); }));

  add(Section("changes"));
  add(WithDefault("changes.enabled", K::kBool, "false",
                  [](const Config& c) { return Text(c.changes.enabled); }));
  add(WithDefault("changes.dsn", K::kString, "",
                  [](const Config& c) { return Text(c.changes.dsn); }));
  add(Limited(WithDefault("changes.publication", K::kString, "seatwatch",
                          [](const Config& c) { return Text(c.changes.publication); }),
              kMaxChangesNameLength));
  add(Limited(WithDefault("changes.slot_prefix", K::kString, "seatwatch",
                          [](const Config& c) { return Text(c.changes.slot_prefix); }),
              kMaxChangesNameLength));
  add(Bounded("changes.interval", K::kDuration, "200ms", 100, kMaxIntervalMs,
              [](const Config& c) { return Text(c.changes.interval); }));
  add(Bounded("changes.recheck_time_per_minute", K::kDuration, "1s", 1, 60000,
              [](const Config& c) { return Text(c.changes.recheck_time_per_minute); }));
  add(Bounded("changes.full_pass_interval", K::kDuration, "1h", 100, kMaxIntervalMs,
              [](const Config& c) { return Text(c.changes.full_pass_interval); }));
  add(Bounded("changes.statement_timeout", K::kDuration, "5s", 1, kMaxTimeoutMs,
              [](const Config& c) { return Text(c.changes.statement_timeout); }));
  add(Bounded("changes.create_timeout", K::kDuration, "5s", 1, kMaxTimeoutMs,
              [](const Config& c) { return Text(c.changes.create_timeout); }));
  add(Bounded("changes.max_changes", K::kInteger, "100000", 1, 10000000,
              [](const Config& c) { return Text(c.changes.max_changes); }));
  return keys;
}

}  // namespace

const std::vector<KeySpec>& AllKeys() {
  static const std::vector<KeySpec> kKeys = BuildKeys();
  return kKeys;
}

const KeySpec& KeyNamed(std::string_view name) {
  for (const KeySpec& spec : AllKeys()) {
    if (spec.name == name) return spec;
  }
  throw std::logic_error("config key \"" + std::string(name) + "\" is not in the key table");
}

std::string QuotedChoices(const std::vector<std::string>& allowed) {
  std::string out;
  for (size_t i = 0; i < allowed.size(); ++i) {
    if (i > 0) out += i + 1 == allowed.size() ? " or " : ", ";
    out += "\"" + allowed[i] + "\"";
  }
  return out;
}

}  // namespace seatwatch::config
