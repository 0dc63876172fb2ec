// The declared entries of each check lowered into one query entry, which
// the daemon runs like a hand-written one: one pass for the check, a detail
// query per invariant, incremental mode with a derived key and table map.
#include <map>

#include "config/sections.h"
#include "declare/compiled_check.h"

namespace seatwatch::config {

namespace {

// Keys every entry of one check must agree on: one pass has one cadence,
// one row bound and one runbook.
template <typename T>
void RequireShared(const std::vector<const DeclaredEntry*>& entries, const std::string& key,
                   T (*of)(const DeclaredEntry&)) {
  const DeclaredEntry* first = nullptr;
  for (const DeclaredEntry* entry : entries) {
    if (!entry->keys.count(key)) continue;
    if (!first) {
      first = entry;
    } else if (of(*entry) != of(*first)) {
      Fail(entry->FieldLocation(key), "invariant." + key,
           "differs from that of \"" + first->declaration.name + "\" in check \"" + entry->check +
               "\": the entries of one check run as one pass");
    }
  }
}

// What incremental mode needs of a compiled pass, or why it has none.
void SetIncremental(const declare::CompiledCheck& compiled, QueryConfig& query) {
  if (compiled.scoped_sql.empty()) {
    query.not_incremental = compiled.not_incremental;
    return;
  }
  query.key = compiled.labels.front();
  query.tables = compiled.tables;
  query.scoped_sql = compiled.scoped_sql;
  query.expiry_column = compiled.expiry_column;
  query.row_terms = compiled.row_terms;
  query.not_row_wise = compiled.not_row_wise;
}

QueryConfig Lower(const std::vector<const DeclaredEntry*>& entries,
                  const declare::CompiledCheck& compiled) {
  const DeclaredEntry& first = *entries.front();
  QueryConfig query;
  query.kind = QueryConfig::Kind::kInvariant;
  query.compiled = true;
  query.name = compiled.name;
  query.pass_of = compiled.name;
  query.help = entries.size() == 1 ? first.help
                                   : "Invariants declared for check " + compiled.name;
  query.labels = compiled.labels;
  query.value = declare::kViolationsColumn;
  query.invariant_column = declare::kInvariantColumn;
  query.invariants = compiled.invariants;
  query.sql = compiled.full_sql;
  query.detail_sql = compiled.detail_sql;
  query.where = first.where;
  query.keys["name"] = first.FieldLocation(first.keys.count("check") ? "check" : "name");
  for (const DeclaredEntry* entry : entries) {
    const std::string& name = entry->declaration.name;
    query.declared[name] = entry->declaration.kind;
    if (!entry->help.empty()) query.invariant_help[name] = entry->help;
    if (!entry->detail_sql_path.empty()) {
      query.detail_sql_path[name] = entry->detail_sql_path;
      query.keys["detail_sql." + name] = entry->FieldLocation("detail_sql");
    }
    if (entry->interval) query.interval = entry->interval;
    if (entry->max_rows) query.max_rows = *entry->max_rows;
    if (!entry->runbook_url.empty()) query.runbook_url = entry->runbook_url;
  }
  SetIncremental(compiled, query);
  return query;
}

// `metric` of `compiled` (its `index`th): a [[metric]] reading the rows of
// its check's pass that carry its value; `pass` is the check's invariant
// entry, or nullptr when the metric's check has none.
QueryConfig LowerMetric(const DeclaredMetric& metric, size_t index,
                        const declare::CompiledCheck& compiled, const QueryConfig* pass) {
  const declare::CompiledMetric& lowered = compiled.metrics.at(index);
  QueryConfig query;
  query.kind = QueryConfig::Kind::kMetric;
  query.compiled = true;
  query.pass_of = compiled.name;
  query.name = lowered.name;
  query.help = metric.help;
  query.labels = lowered.labels;
  query.value = lowered.value_column;
  query.sql = compiled.full_sql;
  query.where = metric.where;
  query.keys["name"] = metric.FieldLocation("name");
  // One pass, one cadence and one row bound: the check's when it has any.
  query.interval = metric.interval;
  if (metric.max_rows) query.max_rows = *metric.max_rows;
  if (pass) {
    for (const char* key : {"interval", "max_rows"}) {
      bool differs = key == std::string("interval") ? metric.interval && metric.interval != pass->interval
                                                    : metric.max_rows && *metric.max_rows != pass->max_rows;
      if (differs) {
        Fail(metric.FieldLocation(key), std::string("metric.") + key,
             "differs from that of check \"" + compiled.name +
                 "\", whose pass the metric reads: leave it out");
      }
    }
    query.interval = pass->interval;
    query.max_rows = pass->max_rows;
  }
  SetIncremental(compiled, query);
  return query;
}

// Two incremental entries that map one table to different key columns: the
// change feed keeps one key column per table.
void RequireOneKeyColumnPerTable(const Config& config,
                                 const std::map<std::string, const DeclaredEntry*>& first_of) {
  if (!config.changes.enabled) return;
  std::map<std::string, std::pair<std::string, const QueryConfig*>> seen;
  for (const auto& query : config.queries) {
    if (!query.AsksIncremental()) continue;
    for (const auto& [table, column] : query.tables) {
      auto [it, added] = seen.emplace(table, std::make_pair(column, &query));
      if (added || it->second.first == column) continue;
      const QueryConfig& other = *it->second.second;
      const QueryConfig& compiled = query.compiled ? query : other;
      auto entry = first_of.find(compiled.name);
      Location where = entry != first_of.end() ? entry->second->FieldLocation("key") : compiled.where;
      Fail(where, "invariant.key",
           "check \"" + query.name + "\" maps table " + table + " to key column \"" + column +
               "\" and \"" + other.name + "\" to \"" + it->second.first +
               "\": the change feed keeps one key column per table (give them the same key)");
    }
  }
}

}  // namespace

void CompileDeclarations(Config& config) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const DeclaredEntry*>> by_check;
  std::map<std::string, std::vector<const DeclaredMetric*>> metrics_of;
  for (const auto& entry : config.declared) {
    auto& entries = by_check[entry.check];
    if (entries.empty()) order.push_back(entry.check);
    entries.push_back(&entry);
  }
  for (const auto& metric : config.declared_metrics) {
    if (!by_check.count(metric.check) && !metrics_of.count(metric.check)) {
      order.push_back(metric.check);
    }
    metrics_of[metric.check].push_back(&metric);
  }
  std::map<std::string, const DeclaredEntry*> first_of;
  for (const auto& check : order) {
    const auto& entries = by_check[check];
    const auto& metrics = metrics_of[check];
    if (!entries.empty()) first_of[check] = entries.front();
    RequireShared<std::optional<Millis>>(entries, "interval",
                                         [](const DeclaredEntry& e) { return e.interval; });
    RequireShared<std::optional<int>>(entries, "max_rows",
                                      [](const DeclaredEntry& e) { return e.max_rows; });
    RequireShared<std::string>(entries, "runbook_url",
                               [](const DeclaredEntry& e) { return e.runbook_url; });
    std::vector<declare::Declaration> declarations;
    for (const DeclaredEntry* entry : entries) declarations.push_back(entry->declaration);
    std::vector<declare::MetricDeclaration> tallied;
    for (const DeclaredMetric* metric : metrics) tallied.push_back(metric->metric);
    declare::CompiledCheck compiled;
    try {
      compiled = declare::CompileCheck(check, declarations, tallied);
    } catch (const declare::DeclarationError& e) {
      for (const DeclaredMetric* metric : metrics) {
        if (metric->metric.name == e.entry()) {
          Fail(metric->FieldLocation(e.field()), "metric." + e.field(), e.what());
        }
      }
      if (entries.empty()) {
        Fail(metrics.front()->FieldLocation(e.field()), "metric." + e.field(), e.what());
      }
      const DeclaredEntry* culprit = entries.front();
      for (const DeclaredEntry* entry : entries) {
        if (entry->declaration.name == e.entry()) culprit = entry;
      }
      Fail(culprit->FieldLocation(e.field()), "invariant." + e.field(), e.what());
    }
    const QueryConfig* pass = nullptr;
    if (!entries.empty()) {
      config.queries.push_back(Lower(entries, compiled));
      pass = &config.queries.back();
    }
    QueryConfig check_entry = pass ? *pass : QueryConfig{};
    for (size_t i = 0; i < metrics.size(); ++i) {
      config.queries.push_back(
          LowerMetric(*metrics[i], i, compiled, entries.empty() ? nullptr : &check_entry));
    }
  }
  RequireOneKeyColumnPerTable(config, first_of);
}

}  // namespace seatwatch::config
