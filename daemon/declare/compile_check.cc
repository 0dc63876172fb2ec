#include <algorithm>
#include <optional>

#include "declare/balance_gate.h"
#include "declare/compiled_check.h"
#include "declare/identifier.h"
#include "declare/kind_sql.h"

namespace seatwatch::declare {

namespace {

const std::string& KindText(const Declaration& d) { return d.kind; }

const KindSql& SqlOf(const Declaration& d) { return *KindNamed(KindText(d)); }

std::string Violations(const Declaration& d, const KeyFilter& filter, const BalanceGate* gate) {
  if (gate) {
    if (auto gated = gate->Violations(d)) return *gated;
  }
  return SqlOf(d).Violations(d, filter);
}

// The labels as text (so that entries whose key columns differ in type
// still share one result), each entry's rows under its invariant's name.
std::string Branch(const Declaration& d, const KeyFilter& filter, const BalanceGate* gate,
                   const std::string& tail) {
  std::string labels;
  for (const auto& label : d.labels) {
    labels += QuoteIdentifier(label) + "::text AS " + QuoteIdentifier(label) + ", ";
  }
  return "-- " + d.name + " (" + KindText(d) + ")\nSELECT " + labels + "'" + d.name +
         "'::text AS " + kInvariantColumn + ", " + kViolationsColumn + "::float8 AS " +
         kViolationsColumn + ", NULL::float8 AS " + kExpiryColumn + tail + "\nFROM (\n" +
         Indented(Violations(d, filter, gate)) + "\n) AS v";
}

// Each key's next moment of `expires` (a hold that lapses changes the
// verdict with no write): a row with no invariant, read by incremental mode.
std::string ExpiryBranch(const Declaration& d, const KeyFilter& filter, const std::string& tail) {
  std::string labels;
  for (size_t i = 0; i < d.key.size(); ++i) {
    labels += Col("r", d.key[i]) + "::text AS " + QuoteIdentifier(d.labels[i]) + ", ";
  }
  std::string column = Col("r", d.rows.expires);
  return "-- " + d.name + ": when each key's next " + d.rows.expires + " passes\nSELECT " + labels +
         "NULL::text AS " + kInvariantColumn + ", NULL::float8 AS " + kViolationsColumn +
         ", extract(epoch FROM min(" + column + "))::float8 AS " + kExpiryColumn + tail + "\nFROM " +
         From(d.rows.table, "r") + "\nWHERE " + column + " > now()" + filter.On("r", d.key) +
         "\nGROUP BY " + Cols("r", d.key);
}

// The result column holding the values of the check's `i`th metric.
std::string ValueColumn(size_t i) { return "seatwatch_value_" + std::to_string(i + 1); }

// The columns after seatwatch_next_expiry: each metric's tally label (two
// metrics may share one) and its value column.
class ResultTail {
 public:
  explicit ResultTail(const std::vector<MetricDeclaration>& metrics) : metrics_(metrics) {
    for (const auto& m : metrics) {
      if (std::find(labels_.begin(), labels_.end(), m.label) == labels_.end()) {
        labels_.push_back(m.label);
      }
    }
  }
  // Every column NULL: the rows of the invariants.
  std::string Nulls() const { return Of(metrics_.size()); }
  // The `i`th metric's label from t.tally, its value from t.value (TallyFrom).
  std::string Of(size_t i) const {
    std::string out;
    for (const auto& label : labels_) {
      bool own = i < metrics_.size() && metrics_[i].label == label;
      out += std::string(", ") + (own ? "t.tally" : "NULL::text") + " AS " + QuoteIdentifier(label);
    }
    for (size_t v = 0; v < metrics_.size(); ++v) {
      out += std::string(", ") + (v == i ? "t.value" : "NULL::float8") + " AS " + ValueColumn(v);
    }
    return out;
  }

 private:
  const std::vector<MetricDeclaration>& metrics_;
  std::vector<std::string> labels_;
};

std::string MetricBranch(const MetricDeclaration& m, size_t i, const BalanceGate& gate,
                         const ResultTail& tail) {
  std::string labels;
  for (size_t i = 0; i < m.labels.size(); ++i) {
    labels += "m.k" + std::to_string(i + 1) + "::text AS " + QuoteIdentifier(m.labels[i]) + ", ";
  }
  return "-- " + m.name + " (count): each count of every key its tables hold, 0 for none\nSELECT " +
         labels + "NULL::text AS " + kInvariantColumn + ", NULL::float8 AS " + kViolationsColumn +
         ", NULL::float8 AS " + kExpiryColumn + tail.Of(i) + "\n" + gate.TallyFrom(m);
}

// `gate`: the pass's BalanceGate, or none when no entry has a balance and
// no metric rides on the check.
std::string Pass(const std::vector<Declaration>& declarations,
                 const std::vector<MetricDeclaration>& metrics, const KeyFilter& filter,
                 const BalanceGate* gate) {
  ResultTail tail(metrics);
  const std::string nulls = tail.Nulls();
  std::string sql = gate ? gate->With() : "";
  bool first = true;
  auto add = [&](const std::string& branch) {
    sql += (first ? "" : "\nUNION ALL\n") + branch;
    first = false;
  };
  for (const auto& d : declarations) add(Branch(d, filter, gate, nulls));
  for (const auto& d : declarations) {
    if (d.rows.expires.empty()) continue;
    std::optional<std::string> from_scan = gate ? gate->Expiry(d, nulls) : std::nullopt;
    add(from_scan ? *from_scan : ExpiryBranch(d, filter, nulls));
  }
  for (size_t i = 0; i < metrics.size(); ++i) {
    add(MetricBranch(metrics[i], i, *gate, tail));
    sql += gate->TallyExpiry(metrics[i], declarations, nulls);
  }
  return sql;
}

}  // namespace

CompiledCheck CompileCheck(const std::string& check, const std::vector<Declaration>& declarations,
                           const std::vector<MetricDeclaration>& metrics) {
  CompiledCheck out;
  out.name = check;
  out.labels = declarations.empty() ? metrics.at(0).labels : declarations.at(0).labels;
  for (const auto& d : declarations) {
    if (d.labels != out.labels) {
      throw DeclarationError("key", "the entries of check \"" + check +
                                        "\" must share their key's labels: one pass, one key",
                             d.name);
    }
    out.invariants.push_back(d.name);
    KeyFilter detail;
    for (size_t i = 0; i < d.key.size(); ++i) detail.params.push_back(static_cast<int>(i) + 1);
    out.detail_sql[d.name] = SqlOf(d).Detail(d, detail);
    if (!d.rows.expires.empty()) out.expiry_column = kExpiryColumn;
  }
  for (size_t i = 0; i < metrics.size(); ++i) {
    const MetricDeclaration& m = metrics[i];
    if (m.labels != out.labels) {
      throw DeclarationError("key", "metric " + m.name + " rides on check \"" + check +
                                        "\" and must share its key's labels: one pass, one key",
                             m.name);
    }
    CompiledMetric compiled{m.name, m.labels, ValueColumn(i)};
    compiled.labels.push_back(m.label);
    out.metrics.push_back(compiled);
    for (const auto& tally : m.tallies) {
      if (!tally.rows.expires.empty()) out.expiry_column = kExpiryColumn;
    }
  }
  BalanceGate gate(declarations, metrics, KeyFilter{});
  out.full_sql = Pass(declarations, metrics, KeyFilter{}, gate.empty() ? nullptr : &gate);
  if (out.labels.size() != 1) {
    out.not_incremental = "its key has " + std::to_string(out.labels.size()) +
                          " columns; incremental mode takes a key of one column";
    return out;
  }
  std::vector<std::pair<KeyedTable, std::string>> read;  // each table read, by which entry
  for (const auto& d : declarations) {
    for (const auto& table : SqlOf(d).Tables(d)) read.emplace_back(table, d.name);
  }
  for (const auto& m : metrics) {
    for (const auto& tally : m.tallies) {
      read.emplace_back(KeyedTable{tally.rows.table, tally.rows.columns}, m.name);
    }
  }
  for (const auto& [table, entry] : read) {
    std::string name = TableText(table.table);
    auto [it, added] = out.tables.emplace(name, table.key_columns.at(0));
    if (!added && it->second != table.key_columns.at(0)) {
      throw DeclarationError("key", "reads " + name + " by key column \"" + it->second +
                                        "\" in one entry of check \"" + check + "\" and \"" +
                                        table.key_columns.at(0) +
                                        "\" in another: the change feed maps a table to one key",
                             entry);
    }
  }
  // The dirty keys of a recheck balance as the whole table does: a
  // recheck reads each table once for them, and exactly only the keys
  // out of balance.
  KeyFilter dirty{{1}, ""};
  BalanceGate scoped_gate(declarations, metrics, dirty);
  out.scoped_sql =
      Pass(declarations, metrics, dirty, scoped_gate.empty() ? nullptr : &scoped_gate);
  RowTerms terms = CompileRowTerms(declarations, metrics);
  if (terms.not_row_wise.empty()) {
    out.row_terms = std::make_shared<const RowTerms>(std::move(terms));
  } else {
    out.not_row_wise = terms.not_row_wise;
  }
  return out;
}

}  // namespace seatwatch::declare
