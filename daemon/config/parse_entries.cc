// [[invariant]] and [[metric]]: a SQL file whose rows become samples.
#include <algorithm>
#include <set>

#include "config/names.h"
#include "config/sections.h"

namespace seatwatch::config {

namespace {

// Families seatwatch exports itself; a [[metric]] must not shadow them.
bool IsReservedMetricName(const std::string& name) {
  static const std::vector<std::string> kPrefixes = {"check_",   "invariant_",   "lock_",
                                                     "holds_",   "cleanup_",     "transaction_",
                                                     "process_", "changes_",
                                                     "incremental_"};
  static const std::set<std::string> kNames = {
      "up",       "build_info",    "last_poll_timestamp_seconds", "poll_interval_seconds",
      "sessions", "deadlocks_total", "xact_rollbacks_total",      "payments_lapsed",
      "dirty_keys", "full_passes_total"};
  if (kNames.count(name)) return true;
  for (const auto& prefix : kPrefixes) {
    if (name.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

void CheckLabels(TableReader& reader, const QueryConfig& query) {
  const Location& where = query.KeyLocation("labels");
  const std::string key = reader.Qualified("labels");
  std::set<std::string> seen;
  for (const auto& label : query.labels) {
    RequireLength(where, key, label, kMaxColumnLength, "a label");
    if (!IsLabelName(label)) {
      Fail(where, key, Printable(label) + " is not a valid Prometheus label name");
    }
    if (label == "invariant" && query.kind == QueryConfig::Kind::kInvariant) {
      Fail(where, key, "\"invariant\" is reserved: seatwatch sets it on every invariant series");
    }
    if (!seen.insert(label).second) Fail(where, key, "\"" + label + "\" is listed twice");
    if (label == query.value) Fail(where, key, "\"" + label + "\" is also the value column");
  }
}

// invariant_column and invariants: one entry, one invariant or several.
void ParseInvariants(TableReader& reader, QueryConfig& query) {
  query.invariant_column = reader.String("invariant_column").value_or("");
  std::vector<std::string> invariants;
  bool has_invariants = false;
  if (auto listed = reader.StringArray("invariants")) {
    invariants = std::move(*listed);
    has_invariants = true;
  }
  const std::string key = reader.Qualified("invariants");
  if (query.invariant_column.empty()) {
    if (has_invariants) {
      Fail(query.KeyLocation("invariants"), key,
           "needs invariant_column (the result column that names each row's invariant)");
    }
    query.invariants = {query.name};
    return;
  }
  if (invariants.empty()) {
    Fail(query.where, key,
         "is required with invariant_column: list every invariant the query may name");
  }
  const Location& column_where = query.KeyLocation("invariant_column");
  RequireColumnName(column_where, reader.Qualified("invariant_column"), query.invariant_column);
  bool is_label = std::find(query.labels.begin(), query.labels.end(), query.invariant_column) !=
                  query.labels.end();
  if (is_label || query.invariant_column == query.value) {
    Fail(column_where, reader.Qualified("invariant_column"),
         "must not also be a label or the value column");
  }
  std::set<std::string> seen;
  for (const auto& name : invariants) {
    RequireIdentifier(query.KeyLocation("invariants"), key, name, "an invariant name");
    if (!seen.insert(name).second) {
      Fail(query.KeyLocation("invariants"), key, "\"" + name + "\" is listed twice");
    }
  }
  query.invariants = invariants;
}

// Each string of `table`, the value of `leaf` (detail_sql, invariant_help):
// a table whose keys are this entry's invariants. Calls
// take(invariant, text, where, qualified key) and records where each was.
template <typename Take>
void ForEachInvariantString(TableReader& reader, QueryConfig& query, const std::string& leaf,
                            const toml::table& table, Take take) {
  const std::string key = reader.Qualified(leaf);
  for (auto&& [name_key, item] : table) {
    std::string invariant(name_key.str());
    Location where = LocationOf(reader.file(), name_key.source());
    RequireLength(where, key, invariant, kMaxNameLength, "a key");
    const std::string item_key = key + "." + invariant;
    if (std::find(query.invariants.begin(), query.invariants.end(), invariant) ==
        query.invariants.end()) {
      Fail(where, item_key, "is not one of this entry's invariants");
    }
    if (!item.is_string()) Fail(where, item_key, "must be a string");
    take(invariant, *item.template value<std::string>(), where, item_key);
    query.keys[leaf + "." + invariant] = where;
  }
}

// detail_sql: a file, or a table of invariant = file with invariant_column.
void ParseDetailSql(TableReader& reader, QueryConfig& query) {
  const toml::node* node = reader.Find("detail_sql");
  if (!node) return;
  const std::string key = reader.Qualified("detail_sql");
  if (query.invariant_column.empty()) {
    auto file = reader.String("detail_sql");
    query.detail_sql_path[query.name] =
        ResolvePath(reader.file(), RequirePath(reader.Where(*node), key, *file));
    return;
  }
  const toml::table* table = node->as_table();
  if (!table) {
    Fail(reader.Where(*node), key,
         "must be a table of invariant = \"file.sql\" when the entry feeds several invariants");
  }
  ForEachInvariantString(reader, query, "detail_sql", *table,
                         [&](const std::string& invariant, const std::string& file,
                             const Location& where, const std::string& item_key) {
                           query.detail_sql_path[invariant] =
                               ResolvePath(reader.file(), RequirePath(where, item_key, file));
                         });
}

// What a person reads next to a violated invariant: its own help text
// (invariant_help, a table of invariant = "text"; the entry's help otherwise)
// and its runbook entry (runbook_url).
void ParseInvariantGuidance(TableReader& reader, QueryConfig& query) {
  if (const toml::table* table = reader.Table("invariant_help")) {
    const size_t max_length = reader.Spec("help").max_length;
    ForEachInvariantString(reader, query, "invariant_help", *table,
                           [&](const std::string& invariant, const std::string& text,
                               const Location& where, const std::string& item_key) {
                             RequireLength(where, item_key, text, max_length);
                             // As `help`: the page escapes line breaks and tabs.
                             if (HasControlCharacter(text, "\n\t")) {
                               Fail(where, item_key,
                                    "must not contain control characters other than line "
                                    "breaks and tabs");
                             }
                             query.invariant_help[invariant] = text;
                           });
  }
  query.runbook_url = ReadRunbookUrl(reader, query.KeyLocation("runbook_url"));
}

// name, sql, value, help, labels, params, interval and max_rows.
void ParseCommonKeys(TableReader& reader, QueryConfig& query) {
  auto required = [&](const std::string& key) -> std::string {
    auto value = reader.String(key);
    if (!value) Fail(query.where, reader.Qualified(key), "is required");
    if (value->empty()) Fail(query.KeyLocation(key), reader.Qualified(key), "must not be empty");
    return *value;
  };
  query.name = required("name");
  RequireIdentifier(query.KeyLocation("name"), reader.Qualified("name"), query.name);
  std::string sql = required("sql");
  RequirePath(query.KeyLocation("sql"), reader.Qualified("sql"), sql);
  query.sql_path = ResolvePath(reader.file(), sql);
  query.value = required("value");
  RequireColumnName(query.KeyLocation("value"), reader.Qualified("value"), query.value);
  query.help = reader.LimitedString("help").value_or("");
  // Line breaks and tabs are fine: the exposition writer escapes HELP as the
  // text format requires. Anything else would reach scrapes and terminals raw.
  if (HasControlCharacter(query.help, "\n\t")) {
    Fail(query.KeyLocation("help"), reader.Qualified("help"),
         "must not contain control characters other than line breaks and tabs");
  }
  if (auto labels = reader.StringArray("labels")) query.labels = std::move(*labels);
  if (auto params = reader.ScalarArray("params")) query.params = std::move(*params);
  query.interval = reader.Duration("interval");
  if (auto v = reader.Integer("max_rows")) query.max_rows = static_cast<int>(*v);
}

QueryConfig ParseQuery(TableReader& reader, QueryConfig::Kind kind) {
  QueryConfig query;
  query.kind = kind;
  query.where = reader.TableWhere();
  const std::vector<std::string> kKeys = {
      "name",       "sql",     "help",   "labels",     "value",        "params",
      "interval",   "invariant_column",  "invariants", "detail_sql",   "max_rows",
      "key",        "tables",  "scoped_sql",           "expiry_column",
      "invariant_help",        "runbook_url"};
  for (const auto& key : kKeys) {
    if (const toml::node* node = reader.Peek(key)) query.keys[key] = reader.Where(*node);
  }
  ParseCommonKeys(reader, query);
  CheckLabels(reader, query);

  if (kind == QueryConfig::Kind::kMetric) {
    for (const char* key : {"invariant_column", "invariants", "detail_sql", "invariant_help",
                            "runbook_url"}) {
      if (query.keys.count(key)) {
        Fail(query.KeyLocation(key), reader.Qualified(key), "is only valid in [[invariant]]");
      }
    }
    if (IsReservedMetricName(query.name)) {
      Fail(query.KeyLocation("name"), reader.Qualified("name"),
           "\"seatwatch_" + query.name + "\" would clash with a metric seatwatch exports itself");
    }
  } else {
    ParseInvariants(reader, query);
    ParseDetailSql(reader, query);
    ParseInvariantGuidance(reader, query);
  }
  ParseIncremental(reader, query);
  reader.RejectUnknownKeys();
  return query;
}

}  // namespace

std::string ReadRunbookUrl(TableReader& reader, const Location& where) {
  auto url = reader.LimitedString("runbook_url");
  if (!url) return "";
  bool web = url->rfind("https://", 0) == 0 || url->rfind("http://", 0) == 0;
  bool plain = std::none_of(url->begin(), url->end(), [](unsigned char c) {
    return c <= ' ' || c == '"' || c == '<' || c == '>' || c == 0x7f;
  });
  if (!web || !plain) {
    Fail(where, reader.Qualified("runbook_url"),
         Printable(*url) + " must be an http:// or https:// URL without spaces or quotes");
  }
  return *url;
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
    if (kind == QueryConfig::Kind::kInvariant && reader.Peek("kind")) {
      config.declared.push_back(ParseDeclaredEntry(reader));
    } else if (reader.Peek("kind")) {
      config.declared_metrics.push_back(ParseDeclaredMetric(reader));
    } else {
      config.queries.push_back(ParseQuery(reader, kind));
    }
  }
}

void CheckUniqueNames(const Config& config) {
  static const std::set<std::string> kBuiltInChecks = {"locks", "holds", "cleanup"};
  std::set<std::string> checks;
  std::set<std::string> invariants;
  for (const auto& query : config.queries) {
    const std::string section =
        query.kind == QueryConfig::Kind::kInvariant ? "invariant" : "metric";
    if (kBuiltInChecks.count(query.name)) {
      Fail(query.KeyLocation("name"), section + ".name",
           "\"" + query.name + "\" is the name of a built-in check");
    }
    if (!checks.insert(query.name).second) {
      Fail(query.KeyLocation("name"), section + ".name", "duplicate name \"" + query.name + "\"");
    }
    if (query.kind != QueryConfig::Kind::kInvariant) continue;
    for (const auto& name : query.invariants) {
      if (!invariants.insert(name).second) {
        Fail(query.KeyLocation(query.invariant_column.empty() ? "name" : "invariants"),
             section + ".invariants", "invariant \"" + name + "\" is defined twice");
      }
    }
  }
}

}  // namespace seatwatch::config
