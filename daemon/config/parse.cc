#include "config/parse.h"

#include <toml++/toml.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>

#include "config/config_error.h"
#include "config/names.h"
#include "config/validate.h"
#include "http/bcrypt.h"
#include "http/listen_support.h"
#include "util/duration.h"

namespace seatwatch::config {

namespace {

Location LocationOf(const std::string& file, const toml::source_region& region) {
  return Location{file, static_cast<int>(region.begin.line), static_cast<int>(region.begin.column)};
}

[[noreturn]] void Fail(const Location& where, const std::string& key, const std::string& problem) {
  throw ConfigError(where.Describe(key) + ": " + problem);
}

// PostgreSQL takes statement_timeout and lock_timeout as an int of
// milliseconds; 0 would disable them, which a monitor must never do.
constexpr Millis kMaxTimeout{2147483647};
// Intervals, pauses and thresholds: a day is already far more than useful.
constexpr Millis kMaxInterval = 24h;
// HELP text: a paragraph, not a document.
constexpr size_t kMaxHelpLength = 4096;

// Refuses `value` longer than `max`, before anything echoes it. `what` names
// one item of a list ("a label"); empty for the key's own value.
void RequireLength(const Location& where, const std::string& key, const std::string& value, size_t max,
                   const std::string& what = "") {
  if (value.size() <= max) return;
  Fail(where, key,
       (what.empty() ? "is " : what + " is ") + std::to_string(value.size()) + " characters long; at most " +
           std::to_string(max));
}

// A check, metric or invariant name.
void RequireIdentifier(const Location& where, const std::string& key, const std::string& name,
                       const std::string& what = "") {
  RequireLength(where, key, name, kMaxNameLength, what);
  if (!IsIdentifier(name)) Fail(where, key, Printable(name) + " must match [a-z_][a-z0-9_]*");
}

// A file name: a NUL would silently cut it short, other control
// characters are certainly a mistake.
const std::string& RequirePath(const Location& where, const std::string& key, const std::string& path) {
  if (HasControlCharacter(path)) Fail(where, key, "must not contain control characters");
  return path;
}

// A result column that is not a label: any text PostgreSQL can name.
void RequireColumnName(const Location& where, const std::string& key, const std::string& name) {
  RequireLength(where, key, name, kMaxColumnLength);
  if (HasControlCharacter(name)) Fail(where, key, "must not contain control characters");
}

// Reads one TOML table strictly: every key must be consumed by a getter,
// leftovers are reported as unknown keys (a typo must not disable a check).
class TableReader {
 public:
  TableReader(const toml::table& table, std::string file, std::string prefix)
      : table_(table), file_(std::move(file)), prefix_(std::move(prefix)) {}

  const toml::node* Find(const std::string& key) {
    used_.insert(key);
    return table_.get(key);
  }

  std::string Qualified(const std::string& key) const {
    return prefix_.empty() ? key : prefix_ + "." + key;
  }

  Location Where(const toml::node& node) const { return LocationOf(file_, node.source()); }
  Location TableWhere() const { return LocationOf(file_, table_.source()); }

  bool Has(const std::string& key) { return Find(key) != nullptr; }

  std::optional<std::string> String(const std::string& key) {
    const toml::node* node = Find(key);
    if (!node) return std::nullopt;
    auto value = node->value<std::string>();
    if (!node->is_string() || !value) Fail(Where(*node), Qualified(key), "must be a string");
    return *value;
  }

  // A file name (see RequirePath).
  std::optional<std::string> Path(const std::string& key) {
    auto value = String(key);
    if (value) RequirePath(Where(*Find(key)), Qualified(key), *value);
    return value;
  }

  std::optional<bool> Bool(const std::string& key) {
    const toml::node* node = Find(key);
    if (!node) return std::nullopt;
    if (!node->is_boolean()) Fail(Where(*node), Qualified(key), "must be true or false");
    return *node->value<bool>();
  }

  std::optional<long long> Integer(const std::string& key, long long min, long long max) {
    const toml::node* node = Find(key);
    if (!node) return std::nullopt;
    if (!node->is_integer()) Fail(Where(*node), Qualified(key), "must be an integer");
    long long value = *node->value<int64_t>();
    if (value < min || value > max) {
      Fail(Where(*node), Qualified(key),
           "must be between " + std::to_string(min) + " and " + std::to_string(max) + " (got " +
               std::to_string(value) + ")");
    }
    return value;
  }

  std::optional<Millis> Duration(const std::string& key, Millis min, Millis max) {
    const toml::node* node = Find(key);
    if (!node) return std::nullopt;
    if (!node->is_string()) {
      Fail(Where(*node), Qualified(key), "must be a duration string such as \"5s\" or \"250ms\"");
    }
    Millis value;
    try {
      value = util::ParseDuration(*node->value<std::string>());
    } catch (const std::invalid_argument& e) {
      Fail(Where(*node), Qualified(key), e.what());
    }
    if (value < min || value > max) {
      Fail(Where(*node), Qualified(key),
           "must be at least " + util::FormatDuration(min) + " and at most " + util::FormatDuration(max) +
               " (got " + util::FormatDuration(value) + ")");
    }
    return value;
  }

  std::optional<std::vector<std::string>> StringArray(const std::string& key) {
    const toml::node* node = Find(key);
    if (!node) return std::nullopt;
    const toml::array* array = node->as_array();
    if (!array) Fail(Where(*node), Qualified(key), "must be an array of strings");
    std::vector<std::string> out;
    for (const toml::node& item : *array) {
      if (!item.is_string()) Fail(Where(item), Qualified(key), "must be an array of strings");
      out.push_back(*item.value<std::string>());
    }
    return out;
  }

  // Scalars of any type, rendered as the text PostgreSQL will receive.
  std::optional<std::vector<std::string>> ScalarArray(const std::string& key) {
    const toml::node* node = Find(key);
    if (!node) return std::nullopt;
    const toml::array* array = node->as_array();
    if (!array) Fail(Where(*node), Qualified(key), "must be an array");
    std::vector<std::string> out;
    for (const toml::node& item : *array) {
      if (item.is_string()) {
        out.push_back(*item.value<std::string>());
      } else if (item.is_integer()) {
        out.push_back(std::to_string(*item.value<int64_t>()));
      } else if (item.is_floating_point()) {
        std::ostringstream text;
        text << *item.value<double>();
        out.push_back(text.str());
      } else if (item.is_boolean()) {
        out.push_back(*item.value<bool>() ? "true" : "false");
      } else {
        Fail(Where(item), Qualified(key), "parameters must be strings, numbers or booleans");
      }
    }
    return out;
  }

  const toml::table* Table(const std::string& key) {
    const toml::node* node = Find(key);
    if (!node) return nullptr;
    const toml::table* table = node->as_table();
    if (!table) Fail(Where(*node), Qualified(key), "must be a table");
    return table;
  }

  void RejectUnknownKeys() const {
    for (auto&& [key, node] : table_) {
      std::string name(key.str());
      if (used_.count(name) == 0) {
        // A pasted blob as a key must not become a 50 KB log line.
        std::string shown = name.size() > kMaxNameLength ? name.substr(0, kMaxNameLength) + "..." : name;
        if (HasControlCharacter(shown)) shown = Printable(shown);
        Fail(LocationOf(file_, key.source()), Qualified(shown), "unknown key");
      }
    }
  }

 private:
  const toml::table& table_;
  std::string file_;
  std::string prefix_;
  std::set<std::string> used_;
};

std::string ResolvePath(const std::string& config_path, const std::string& relative) {
  std::filesystem::path target(relative);
  if (target.is_absolute()) return target.lexically_normal().string();
  std::filesystem::path base = std::filesystem::path(config_path).parent_path();
  return (base / target).lexically_normal().string();
}

// Families seatwatch exports itself; a [[metric]] must not shadow them.
bool IsReservedMetricName(const std::string& name) {
  static const std::vector<std::string> kPrefixes = {
      "check_", "invariant_", "lock_", "holds_", "cleanup_", "transaction_", "process_", "changes_"};
  static const std::set<std::string> kNames = {
      "up", "build_info", "last_poll_timestamp_seconds", "poll_interval_seconds", "sessions",
      "deadlocks_total", "xact_rollbacks_total", "payments_lapsed", "dirty_keys", "full_passes_total"};
  if (kNames.count(name)) return true;
  for (const auto& prefix : kPrefixes) {
    if (name.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

void ParseDatabase(TableReader& reader, DatabaseConfig& db, const Location& table) {
  Location dsn_where = table;
  if (const toml::node* node = reader.Find("dsn")) dsn_where = reader.Where(*node);
  if (auto v = reader.String("dsn")) db.dsn = *v;
  if (const toml::node* node = reader.Find("application_name")) {
    db.application_name = *reader.String("application_name");
    Location where = reader.Where(*node);
    // PostgreSQL keeps 63 bytes of it; the locks and cleanup sessions append
    // "-locks" and "-cleanup", and are found again by that name.
    RequireLength(where, "database.application_name", db.application_name, kMaxColumnLength - 8);
    if (HasControlCharacter(db.application_name)) {
      Fail(where, "database.application_name", "must not contain control characters");
    }
  }
  if (const toml::node* node = reader.Find("connect_timeout")) {
    // libpq reads an int of whole seconds and takes anything below 2 as 2.
    db.connect_timeout = *reader.Duration("connect_timeout", 0ms, util::kMaxDuration);
    if (db.connect_timeout.count() % 1000 != 0) {
      Fail(reader.Where(*node), "database.connect_timeout",
           "must be whole seconds (libpq's connect_timeout is an integer number of seconds)");
    }
    if (db.connect_timeout < 2s || db.connect_timeout > 1h) {
      Fail(reader.Where(*node), "database.connect_timeout",
           "must be at least 2s and at most 1h (got " + util::FormatDuration(db.connect_timeout) +
               "; libpq takes anything below 2s as 2s)");
    }
  }
  if (auto v = reader.Duration("statement_timeout", 1ms, kMaxTimeout)) db.statement_timeout = *v;
  if (auto v = reader.Duration("lock_timeout", 1ms, kMaxTimeout)) db.lock_timeout = *v;
  if (auto v = reader.Duration("reconnect_max_backoff", 100ms, 1h)) db.reconnect_max_backoff = *v;
  reader.RejectUnknownKeys();
  RequireUsableDsn(db, dsn_where);
}

// The TLS files and version. A key, client CA or version without a
// certificate is refused rather than ignored: whoever wrote it expects TLS.
void ParseHttpTls(TableReader& reader, HttpConfig& http, const std::string& path) {
  for (const char* key : {"tls_cert_file", "tls_key_file", "tls_client_ca_file"}) {
    const toml::node* node = reader.Find(key);
    if (!node) continue;
    Location where = reader.Where(*node);
    std::string value = *reader.Path(key);
    if (value.empty()) Fail(where, reader.Qualified(key), "must not be empty");
    std::string resolved = ResolvePath(path, value);
    std::string name(key);
    (name == "tls_cert_file" ? http.tls_cert_file : name == "tls_key_file" ? http.tls_key_file
                                                                           : http.tls_client_ca_file) = resolved;
    http.keys[name] = where;
  }
  if (const toml::node* node = reader.Find("tls_min_version")) {
    std::optional<std::string> version = node->value<std::string>();
    if (!node->is_string() || (*version != "1.2" && *version != "1.3")) {
      Fail(reader.Where(*node), "http.tls_min_version", "must be \"1.2\" or \"1.3\"");
    }
    http.tls_min_version = *version == "1.3" ? HttpConfig::TlsVersion::kTls13 : HttpConfig::TlsVersion::kTls12;
    http.keys["tls_min_version"] = reader.Where(*node);
  }
  if (http.tls_cert_file.empty()) {
    for (const char* key : {"tls_key_file", "tls_client_ca_file", "tls_min_version"}) {
      if (http.keys.count(key)) {
        Fail(http.keys[key], reader.Qualified(key), "needs http.tls_cert_file: TLS is on only with a certificate");
      }
    }
  } else if (http.tls_key_file.empty()) {
    Fail(http.keys["tls_cert_file"], "http.tls_key_file", "is required with http.tls_cert_file");
  }
}

// [http.basic_auth] users = { name = "$2y$10$..." }: the format of
// Prometheus' web.config.file basic_auth_users.
void ParseBasicAuth(TableReader& reader, HttpConfig& http, const std::string& path) {
  const toml::node* node = reader.Find("users");
  reader.RejectUnknownKeys();  // first: "user = ..." is a typo, not a missing key
  if (!node) Fail(reader.TableWhere(), "http.basic_auth.users", "is required in [http.basic_auth]");
  const toml::table* users = node->as_table();
  if (!users) {
    Fail(reader.Where(*node), "http.basic_auth.users",
         "must be a table of user = \"bcrypt hash\", e.g. { prometheus = \"$2y$10$...\" }");
  }
  if (users->empty()) Fail(reader.Where(*node), "http.basic_auth.users", "must name at least one user");
  for (auto&& [name_key, item] : *users) {
    std::string name(name_key.str());
    Location where = LocationOf(path, name_key.source());
    RequireLength(where, "http.basic_auth.users", name, kMaxNameLength, "a user name");
    // Basic credentials are "user:password": the user ends at the first colon.
    if (name.empty() || name.find(':') != std::string::npos || HasControlCharacter(name)) {
      Fail(where, "http.basic_auth.users",
           Printable(name) + " is not a usable user name (not empty, no colon, no control characters)");
    }
    const std::string key = "http.basic_auth.users." + name;
    if (!item.is_string()) Fail(where, key, "must be a string: the user's bcrypt hash");
    std::string hash = *item.value<std::string>();
    if (std::string problem = http::BcryptProblem(hash); !problem.empty()) Fail(where, key, problem);
    http.basic_auth_users[name] = hash;
  }
}

void ParseHttp(TableReader& reader, HttpConfig& http, const std::string& path) {
  if (const toml::node* node = reader.Find("listen")) {
    auto value = reader.String("listen");
    RequireLength(reader.Where(*node), "http.listen", *value, kMaxListenLength);
    if (!IsListenAddress(*value)) {
      Fail(reader.Where(*node), "http.listen", "must be HOST:PORT, e.g. \"127.0.0.1:9646\"");
    }
    if (std::string why = http::ListenUnsupported(*value); !why.empty()) {
      Fail(reader.Where(*node), "http.listen", why);
    }
    http.listen = *value;
  }
  ParseHttpTls(reader, http, path);
  if (auto v = reader.Bool("auth_exempt_probes")) http.auth_exempt_probes = *v;
  if (const toml::table* t = reader.Table("basic_auth")) {
    TableReader auth(*t, path, "http.basic_auth");
    ParseBasicAuth(auth, http, path);
  }
  reader.RejectUnknownKeys();
}

// tables = { seats = "event_id", "booking.tickets" = "event_id" }.
void ParseTables(TableReader& reader, QueryConfig& query, const std::string& path) {
  const toml::node* node = reader.Find("tables");
  const std::string key = reader.Qualified("tables");
  const toml::table* table = node->as_table();
  if (!table) {
    Fail(reader.Where(*node), key,
         "must be a table of table = \"key column\", e.g. { seats = \"event_id\" }");
  }
  if (table->empty()) Fail(reader.Where(*node), key, "must name at least one table");
  for (auto&& [name_key, item] : *table) {
    std::string name(name_key.str());
    Location where = LocationOf(path, name_key.source());
    RequireLength(where, key, name, kMaxTableNameLength, "a table name");
    if (!IsTableName(name)) {
      Fail(where, key, Printable(name) + " must be a table name such as \"seats\" or \"public.seats\"");
    }
    const std::string item_key = key + "." + name;
    if (item.is_table()) {
      // TOML reads public.seats = "..." as a table "public" holding "seats".
      Fail(where, item_key, "is a table: quote a schema-qualified name, e.g. \"public.seats\" = \"event_id\"");
    }
    if (!item.is_string()) Fail(where, item_key, "must be a string: the table's key column");
    std::string column = *item.value<std::string>();
    RequireLength(where, item_key, column, kMaxColumnLength);
    if (!IsIdentifier(column)) Fail(where, item_key, Printable(column) + " must match [a-z_][a-z0-9_]*");
    query.tables[name] = column;
    query.keys["tables." + name] = where;
  }
  // "seats" matches seats in every schema: with "public.seats" beside it, a
  // change to public.seats would have two key columns.
  for (const auto& [name, column] : query.tables) {
    size_t dot = name.find('.');
    if (dot == std::string::npos || !query.tables.count(name.substr(dot + 1))) continue;
    Fail(query.KeyLocation("tables." + name), key + "." + name,
         "overlaps \"" + name.substr(dot + 1) + "\", which already matches that table in every schema");
  }
}

// key, tables, scoped_sql (all or none) and expiry_column: the entry's
// incremental mode.
void ParseIncremental(TableReader& reader, QueryConfig& query, const std::string& path) {
  const std::vector<std::string> kTogether = {"key", "tables", "scoped_sql"};
  std::vector<std::string> present;
  std::vector<std::string> missing;
  for (const auto& key : kTogether) (reader.Has(key) ? present : missing).push_back(key);
  bool has_expiry = reader.Has("expiry_column");
  if (present.empty()) {
    if (has_expiry) {
      Fail(query.KeyLocation("expiry_column"), reader.Qualified("expiry_column"),
           "needs key, tables and scoped_sql: it is read only in incremental mode");
    }
    return;
  }
  if (!missing.empty()) {
    std::string given = present[0];
    if (present.size() == 2) given += " and " + present[1];
    Fail(query.where, reader.Qualified(missing[0]),
         "is required with " + given + ": incremental mode needs key, tables and scoped_sql");
  }

  query.key = *reader.String("key");
  const Location& key_where = query.KeyLocation("key");
  RequireLength(key_where, reader.Qualified("key"), query.key, kMaxColumnLength);
  if (std::find(query.labels.begin(), query.labels.end(), query.key) == query.labels.end()) {
    Fail(key_where, reader.Qualified("key"),
         Printable(query.key) + " is not one of this entry's labels: the key must be a label, so "
                                "that each row belongs to one key");
  }

  ParseTables(reader, query, path);

  auto scoped = reader.Path("scoped_sql");
  if (scoped->empty()) Fail(query.KeyLocation("scoped_sql"), reader.Qualified("scoped_sql"), "must not be empty");
  query.scoped_sql_path = ResolvePath(path, *scoped);

  if (has_expiry) {
    query.expiry_column = *reader.String("expiry_column");
    const Location& where = query.KeyLocation("expiry_column");
    RequireLength(where, reader.Qualified("expiry_column"), query.expiry_column, kMaxColumnLength);
    if (!IsIdentifier(query.expiry_column)) {
      Fail(where, reader.Qualified("expiry_column"),
           Printable(query.expiry_column) + " must match [a-z_][a-z0-9_]*");
    }
    bool is_label = std::find(query.labels.begin(), query.labels.end(), query.expiry_column) !=
                    query.labels.end();
    if (is_label || query.expiry_column == query.value || query.expiry_column == query.invariant_column) {
      Fail(where, reader.Qualified("expiry_column"),
           "must not also be a label, the value column or the invariant column");
    }
  }
}

// What a person reads next to a violated invariant: its own help text
// (invariant_help, a table of invariant = "text"; the entry's help otherwise)
// and its runbook entry (runbook_url).
void ParseInvariantGuidance(TableReader& reader, QueryConfig& query, const std::string& path) {
  if (const toml::node* node = reader.Find("invariant_help")) {
    const toml::table* table = node->as_table();
    if (!table) {
      Fail(reader.Where(*node), reader.Qualified("invariant_help"),
           "must be a table of invariant = \"help text\"");
    }
    for (auto&& [key, item] : *table) {
      std::string invariant(key.str());
      std::string qualified = reader.Qualified("invariant_help." + invariant);
      Location where = LocationOf(path, key.source());
      RequireLength(where, reader.Qualified("invariant_help"), invariant, kMaxNameLength, "a key");
      if (std::find(query.invariants.begin(), query.invariants.end(), invariant) ==
          query.invariants.end()) {
        Fail(where, qualified, "is not one of this entry's invariants");
      }
      if (!item.is_string()) Fail(where, qualified, "must be a string");
      std::string text = *item.value<std::string>();
      RequireLength(where, qualified, text, kMaxHelpLength);
      if (HasControlCharacter(text, "\n\t")) {
        Fail(where, qualified, "must not contain control characters other than line breaks and tabs");
      }
      query.invariant_help[invariant] = std::move(text);
      query.keys["invariant_help." + invariant] = where;
    }
  }
  if (auto url = reader.String("runbook_url")) {
    const Location& where = query.KeyLocation("runbook_url");
    RequireLength(where, reader.Qualified("runbook_url"), *url, kMaxHelpLength);
    bool web = url->rfind("https://", 0) == 0 || url->rfind("http://", 0) == 0;
    bool plain = std::none_of(url->begin(), url->end(), [](unsigned char c) {
      return c <= ' ' || c == '"' || c == '<' || c == '>' || c == 0x7f;
    });
    if (!web || !plain) {
      Fail(where, reader.Qualified("runbook_url"),
           Printable(*url) + " must be an http:// or https:// URL without spaces or quotes");
    }
    query.runbook_url = *url;
  }
}

QueryConfig ParseQuery(TableReader& reader, QueryConfig::Kind kind, const std::string& path) {
  QueryConfig query;
  query.kind = kind;
  query.where = reader.TableWhere();
  const std::vector<std::string> kKeys = {"name",   "sql",    "help",     "labels",
                                          "value",  "params", "interval", "invariant_column",
                                          "invariants", "detail_sql", "max_rows",
                                          "key",    "tables", "scoped_sql", "expiry_column",
                                          "invariant_help", "runbook_url"};
  for (const auto& key : kKeys) {
    if (const toml::node* node = reader.Find(key)) query.keys[key] = reader.Where(*node);
  }
  auto required = [&](const std::string& key) -> std::string {
    auto value = reader.String(key);
    if (!value) Fail(query.where, reader.Qualified(key), "is required");
    if (value->empty()) Fail(query.KeyLocation(key), reader.Qualified(key), "must not be empty");
    return *value;
  };
  query.name = required("name");
  RequireIdentifier(query.KeyLocation("name"), reader.Qualified("name"), query.name);
  query.sql_path =
      ResolvePath(path, RequirePath(query.KeyLocation("sql"), reader.Qualified("sql"), required("sql")));
  query.value = required("value");
  RequireColumnName(query.KeyLocation("value"), reader.Qualified("value"), query.value);
  query.help = reader.String("help").value_or("");
  // Line breaks and tabs are fine: the exposition writer escapes HELP as the
  // text format requires. Anything else would reach scrapes and terminals raw.
  RequireLength(query.KeyLocation("help"), reader.Qualified("help"), query.help, kMaxHelpLength);
  if (HasControlCharacter(query.help, "\n\t")) {
    Fail(query.KeyLocation("help"), reader.Qualified("help"),
         "must not contain control characters other than line breaks and tabs");
  }
  if (auto labels = reader.StringArray("labels")) query.labels = std::move(*labels);
  if (auto params = reader.ScalarArray("params")) query.params = std::move(*params);
  query.interval = reader.Duration("interval", 100ms, kMaxInterval);
  if (auto v = reader.Integer("max_rows", 1, 10000000)) query.max_rows = static_cast<int>(*v);

  std::set<std::string> seen_labels;
  for (const auto& label : query.labels) {
    RequireLength(query.KeyLocation("labels"), reader.Qualified("labels"), label, kMaxColumnLength, "a label");
    if (!IsLabelName(label)) {
      Fail(query.KeyLocation("labels"), reader.Qualified("labels"),
           Printable(label) + " is not a valid Prometheus label name");
    }
    if (label == "invariant" && kind == QueryConfig::Kind::kInvariant) {
      Fail(query.KeyLocation("labels"), reader.Qualified("labels"),
           "\"invariant\" is reserved: seatwatch sets it on every invariant series");
    }
    if (!seen_labels.insert(label).second) {
      Fail(query.KeyLocation("labels"), reader.Qualified("labels"),
           "\"" + label + "\" is listed twice");
    }
    if (label == query.value) {
      Fail(query.KeyLocation("labels"), reader.Qualified("labels"),
           "\"" + label + "\" is also the value column");
    }
  }

  if (kind == QueryConfig::Kind::kMetric) {
    for (const char* key :
         {"invariant_column", "invariants", "detail_sql", "invariant_help", "runbook_url"}) {
      if (query.keys.count(key)) {
        Fail(query.KeyLocation(key), reader.Qualified(key), "is only valid in [[invariant]]");
      }
    }
    if (IsReservedMetricName(query.name)) {
      Fail(query.KeyLocation("name"), reader.Qualified("name"),
           "\"seatwatch_" + query.name + "\" would clash with a metric seatwatch exports itself");
    }
    ParseIncremental(reader, query, path);
    reader.RejectUnknownKeys();
    return query;
  }

  query.invariant_column = reader.String("invariant_column").value_or("");
  std::vector<std::string> invariants;
  bool has_invariants = false;
  if (auto listed = reader.StringArray("invariants")) {
    invariants = std::move(*listed);
    has_invariants = true;
  }
  if (query.invariant_column.empty()) {
    if (has_invariants) {
      Fail(query.KeyLocation("invariants"), reader.Qualified("invariants"),
           "needs invariant_column (the result column that names each row's invariant)");
    }
    query.invariants = {query.name};
  } else {
    if (invariants.empty()) {
      Fail(query.where, reader.Qualified("invariants"),
           "is required with invariant_column: list every invariant the query may name");
    }
    RequireColumnName(query.KeyLocation("invariant_column"), reader.Qualified("invariant_column"),
                      query.invariant_column);
    if (seen_labels.count(query.invariant_column) || query.invariant_column == query.value) {
      Fail(query.KeyLocation("invariant_column"), reader.Qualified("invariant_column"),
           "must not also be a label or the value column");
    }
    std::set<std::string> seen;
    for (const auto& name : invariants) {
      RequireIdentifier(query.KeyLocation("invariants"), reader.Qualified("invariants"), name,
                        "an invariant name");
      if (!seen.insert(name).second) {
        Fail(query.KeyLocation("invariants"), reader.Qualified("invariants"),
             "\"" + name + "\" is listed twice");
      }
    }
    query.invariants = invariants;
  }

  if (const toml::node* node = reader.Find("detail_sql")) {
    if (query.invariant_column.empty()) {
      auto file = reader.String("detail_sql");
      query.detail_sql_path[query.name] =
          ResolvePath(path, RequirePath(reader.Where(*node), reader.Qualified("detail_sql"), *file));
    } else {
      const toml::table* table = node->as_table();
      if (!table) {
        Fail(reader.Where(*node), reader.Qualified("detail_sql"),
             "must be a table of invariant = \"file.sql\" when the entry feeds several invariants");
      }
      for (auto&& [key, item] : *table) {
        std::string invariant(key.str());
        Location where = LocationOf(path, key.source());
        RequireLength(where, reader.Qualified("detail_sql"), invariant, kMaxNameLength, "a key");
        if (std::find(query.invariants.begin(), query.invariants.end(), invariant) ==
            query.invariants.end()) {
          Fail(where, reader.Qualified("detail_sql." + invariant),
               "is not one of this entry's invariants");
        }
        if (!item.is_string()) {
          Fail(where, reader.Qualified("detail_sql." + invariant), "must be a string");
        }
        query.detail_sql_path[invariant] =
            ResolvePath(path, RequirePath(where, reader.Qualified("detail_sql." + invariant),
                                          *item.value<std::string>()));
        query.keys["detail_sql." + invariant] = where;
      }
    }
  }
  ParseInvariantGuidance(reader, query, path);
  ParseIncremental(reader, query, path);
  reader.RejectUnknownKeys();
  return query;
}

void ParseLocks(TableReader& reader, LocksConfig& locks) {
  if (auto v = reader.Bool("enabled")) locks.enabled = *v;
  if (auto v = reader.Duration("interval", 100ms, kMaxInterval)) locks.interval = *v;
  if (auto v = reader.Duration("statement_timeout", 1ms, kMaxTimeout)) locks.statement_timeout = *v;
  if (auto v = reader.Duration("log_threshold", 0ms, kMaxInterval)) locks.log_threshold = *v;
  if (const toml::node* node = reader.Find("show_query")) {
    // Booleans are the older form: false hid the text, true showed it (now normalized).
    using ShowQuery = LocksConfig::ShowQuery;
    std::optional<std::string> name = node->value<std::string>();
    if (node->is_boolean()) {
      locks.show_query = *node->value<bool>() ? ShowQuery::kNormalized : ShowQuery::kNone;
    } else if (node->is_string() && (*name == "normalized" || *name == "raw" || *name == "none")) {
      locks.show_query = *name == "raw"    ? ShowQuery::kRaw
                         : *name == "none" ? ShowQuery::kNone
                                           : ShowQuery::kNormalized;
    } else {
      Fail(reader.Where(*node), "locks.show_query", "must be \"normalized\", \"raw\" or \"none\"");
    }
  }
  if (auto v = reader.Integer("query_max_length", 0, 1 << 20)) {
    locks.query_max_length = static_cast<int>(*v);
  }
  if (const toml::node* node = reader.Find("resolve_rows")) {
    std::vector<std::string> tables;
    if (auto listed = reader.StringArray("resolve_rows")) tables = std::move(*listed);
    for (const auto& table : tables) {
      RequireLength(reader.Where(*node), "locks.resolve_rows", table, kMaxTableNameLength, "a table name");
      if (!IsTableName(table)) {
        Fail(reader.Where(*node), "locks.resolve_rows",
             Printable(table) + " must be a table name such as \"seats\" or \"public.seats\"");
      }
      locks.resolve_rows.push_back(table);
    }
  }
  reader.RejectUnknownKeys();
}

void ParseHolds(TableReader& reader, HoldsConfig& holds, const std::string& path) {
  holds.where = reader.TableWhere();
  holds.enabled = reader.Bool("enabled").value_or(true);
  if (auto v = reader.Path("sql")) holds.sql_path = ResolvePath(path, *v);
  holds.interval = reader.Duration("interval", 100ms, kMaxInterval);
  if (holds.enabled && holds.sql_path.empty()) Fail(holds.where, "holds.sql", "is required");
  reader.RejectUnknownKeys();
}

void ParseCleanup(TableReader& reader, CleanupConfig& cleanup, const std::string& path) {
  cleanup.where = reader.TableWhere();
  if (auto v = reader.Bool("enabled")) cleanup.enabled = *v;
  if (auto v = reader.Path("sql")) cleanup.sql_path = ResolvePath(path, *v);
  if (auto v = reader.Path("dry_run_sql")) cleanup.dry_run_sql_path = ResolvePath(path, *v);
  if (auto v = reader.Duration("interval", 100ms, kMaxInterval)) cleanup.interval = *v;
  if (auto v = reader.Integer("batch_size", 1, 100000)) cleanup.batch_size = static_cast<int>(*v);
  if (auto v = reader.Integer("max_batches", 1, 1000000)) cleanup.max_batches = static_cast<int>(*v);
  if (auto v = reader.Duration("batch_pause", 0ms, kMaxInterval)) cleanup.batch_pause = *v;
  if (auto v = reader.Duration("lock_timeout", 1ms, kMaxTimeout)) cleanup.lock_timeout = *v;
  if (auto v = reader.Duration("statement_timeout", 1ms, kMaxTimeout)) cleanup.statement_timeout = *v;
  if (auto v = reader.Bool("dry_run")) cleanup.dry_run = *v;
  if (cleanup.enabled && cleanup.sql_path.empty()) {
    Fail(cleanup.where, "cleanup.sql", "is required when cleanup is enabled");
  }
  if (cleanup.enabled && cleanup.dry_run && cleanup.dry_run_sql_path.empty()) {
    Fail(cleanup.where, "cleanup.dry_run_sql", "is required when dry_run = true");
  }
  reader.RejectUnknownKeys();
}

// The slot name is "<prefix>_<pid>_<n>": with at most 40 bytes of prefix it
// stays within PostgreSQL's 63, and only [a-z0-9_] is allowed in it.
constexpr size_t kMaxChangesNameLength = 40;

void ParseChanges(TableReader& reader, Config& config) {
  ChangesConfig& changes = config.changes;
  changes.where = reader.TableWhere();
  if (auto v = reader.Bool("enabled")) changes.enabled = *v;
  for (const char* key : {"publication", "slot_prefix"}) {
    const toml::node* node = reader.Find(key);
    if (!node) continue;
    std::string value = *reader.String(key);
    Location where = reader.Where(*node);
    RequireLength(where, reader.Qualified(key), value, kMaxChangesNameLength);
    if (!IsIdentifier(value)) Fail(where, reader.Qualified(key), Printable(value) + " must match [a-z_][a-z0-9_]*");
    (std::string(key) == "publication" ? changes.publication : changes.slot_prefix) = value;
  }
  if (auto v = reader.Duration("interval", 100ms, kMaxInterval)) changes.interval = *v;
  if (auto v = reader.Duration("full_pass_interval", 100ms, kMaxInterval)) changes.full_pass_interval = *v;
  if (changes.full_pass_interval < changes.interval) {
    const toml::node* node = reader.Find("full_pass_interval");
    Fail(node ? reader.Where(*node) : reader.Where(*reader.Find("interval")), "changes.full_pass_interval",
         "must be at least changes.interval (" + util::FormatDuration(changes.interval) + "; got " +
             util::FormatDuration(changes.full_pass_interval) + ")");
  }
  if (auto v = reader.Duration("statement_timeout", 1ms, kMaxTimeout)) changes.statement_timeout = *v;
  if (auto v = reader.Duration("create_timeout", 1ms, kMaxTimeout)) changes.create_timeout = *v;
  if (auto v = reader.Integer("max_changes", 1, 10000000)) changes.max_changes = static_cast<int>(*v);
  if (const toml::node* node = reader.Find("dsn")) {
    changes.dsn = *reader.String("dsn");
    RequireUsableChangesDsn(config, reader.Where(*node));
  }
  reader.RejectUnknownKeys();
}

// [checks]: where the checks lane reads (a standby may serve it).
void ParseChecks(TableReader& reader, Config& config) {
  config.checks.where = reader.TableWhere();
  if (const toml::node* node = reader.Find("dsn")) {
    config.checks.dsn = *reader.String("dsn");
    RequireUsableChecksDsn(config, reader.Where(*node));
  }
  reader.RejectUnknownKeys();
}

void CheckUniqueNames(const Config& config) {
  static const std::set<std::string> kBuiltInChecks = {"locks", "holds", "cleanup"};
  std::set<std::string> checks;
  std::set<std::string> invariants;
  for (const auto& query : config.queries) {
    const char* section = query.kind == QueryConfig::Kind::kInvariant ? "invariant" : "metric";
    if (kBuiltInChecks.count(query.name)) {
      Fail(query.KeyLocation("name"), std::string(section) + ".name",
           "\"" + query.name + "\" is the name of a built-in check");
    }
    if (!checks.insert(query.name).second) {
      Fail(query.KeyLocation("name"), std::string(section) + ".name",
           "duplicate name \"" + query.name + "\"");
    }
    if (query.kind != QueryConfig::Kind::kInvariant) continue;
    for (const auto& name : query.invariants) {
      if (!invariants.insert(name).second) {
        Fail(query.KeyLocation(query.invariant_column.empty() ? "name" : "invariants"),
             std::string(section) + ".invariants", "invariant \"" + name + "\" is defined twice");
      }
    }
  }
}

void ParseEntries(const toml::node* node, const std::string& key, QueryConfig::Kind kind,
                  const std::string& path, Config& config) {
  if (!node) return;
  const toml::array* array = node->as_array();
  if (!array || !array->is_array_of_tables()) {
    Fail(LocationOf(path, node->source()), key,
         "must be written as [[" + key + "]] tables, one per entry");
  }
  for (const toml::node& item : *array) {
    TableReader reader(*item.as_table(), path, key);
    config.queries.push_back(ParseQuery(reader, kind, path));
  }
}

}  // namespace

Config ParseConfig(std::string_view toml_text, const std::string& path) {
  toml::table root;
  try {
    root = toml::parse(toml_text, path);
  } catch (const toml::parse_error& e) {
    Location where = LocationOf(path, e.source());
    throw ConfigError(where.file + ":" + std::to_string(where.line) + ":" +
                      std::to_string(where.column) + ": " + std::string(e.description()));
  }
  Config config;
  config.path = path;
  TableReader top(root, path, "");
  if (const toml::node* node = top.Find("log_level")) {
    config.log_level = *top.String("log_level");
    static const std::set<std::string> kLevels = {"debug", "info", "warn", "error"};
    if (!kLevels.count(config.log_level)) {
      Fail(top.Where(*node), "log_level", "must be one of debug, info, warn, error");
    }
  }
  if (auto v = top.Bool("allow_no_checks")) config.allow_no_checks = *v;
  if (const toml::table* t = top.Table("database")) {
    TableReader reader(*t, path, "database");
    ParseDatabase(reader, config.database, reader.TableWhere());
  }
  if (const toml::table* t = top.Table("http")) {
    TableReader reader(*t, path, "http");
    ParseHttp(reader, config.http, path);
  }
  if (const toml::table* t = top.Table("poll")) {
    TableReader reader(*t, path, "poll");
    if (auto v = reader.Duration("interval", 100ms, kMaxInterval)) config.poll.interval = *v;
    reader.RejectUnknownKeys();
  }
  ParseEntries(top.Find("invariant"), "invariant", QueryConfig::Kind::kInvariant, path, config);
  ParseEntries(top.Find("metric"), "metric", QueryConfig::Kind::kMetric, path, config);
  if (const toml::table* t = top.Table("locks")) {
    TableReader reader(*t, path, "locks");
    config.locks.where = reader.TableWhere();
    ParseLocks(reader, config.locks);
  }
  if (const toml::table* t = top.Table("holds")) {
    TableReader reader(*t, path, "holds");
    ParseHolds(reader, config.holds, path);
  }
  if (const toml::table* t = top.Table("cleanup")) {
    TableReader reader(*t, path, "cleanup");
    ParseCleanup(reader, config.cleanup, path);
  }
  if (const toml::table* t = top.Table("changes")) {
    TableReader reader(*t, path, "changes");
    ParseChanges(reader, config);
  }
  if (const toml::table* t = top.Table("checks")) {
    TableReader reader(*t, path, "checks");
    ParseChecks(reader, config);
  }
  top.RejectUnknownKeys();
  CheckUniqueNames(config);
  RequireChangesConsumer(config);
  return config;
}

}  // namespace seatwatch::config
