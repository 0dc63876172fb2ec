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
std::string Branch(const Declaration& d, const KeyFilter& filter, const BalanceGate* gate) {
  std::string labels;
  for (const auto& label : d.labels) {
    labels += QuoteIdentifier(label) + "::text AS " + QuoteIdentifier(label) + ", ";
  }
  return "-- " + d.name + " (" + KindText(d) + ")\nSELECT " + labels + "'" + d.name +
         "'::text AS " + kInvariantColumn + ", " + kViolationsColumn + "::float8 AS " +
         kViolationsColumn + ", NULL::float8 AS " + kExpiryColumn + "\nFROM (\n" +
         Indented(Violations(d, filter, gate)) + "\n) AS v";
}

// Each key's next moment of `expires` (a hold that lapses changes the
// verdict with no write): a row with no invariant, read by incremental mode.
std::string ExpiryBranch(const Declaration& d, const KeyFilter& filter) {
  std::string labels;
  for (size_t i = 0; i < d.key.size(); ++i) {
    labels += Col("r", d.key[i]) + "::text AS " + QuoteIdentifier(d.labels[i]) + ", ";
  }
  std::string column = Col("r", d.rows.expires);
  return "-- " + d.name + ": when each key's next " + d.rows.expires + " passes\nSELECT " + labels +
         "NULL::text AS " + kInvariantColumn + ", NULL::float8 AS " + kViolationsColumn +
         ", extract(epoch FROM min(" + column + "))::float8 AS " + kExpiryColumn + "\nFROM " +
         From(d.rows.table, "r") + "\nWHERE " + column + " > now()" + filter.On("r", d.key) +
         "\nGROUP BY " + Cols("r", d.key);
}

// `gate`: the pass's BalanceGate, or none when no entry has a balance.
std::string Pass(const std::vector<Declaration>& declarations, const KeyFilter& filter,
                 const BalanceGate* gate = nullptr) {
  std::string sql = gate ? gate->With() : "";
  bool first = true;
  for (const auto& d : declarations) {
    sql += (first ? "" : "\nUNION ALL\n") + Branch(d, filter, gate);
    first = false;
  }
  for (const auto& d : declarations) {
    if (d.rows.expires.empty()) continue;
    std::optional<std::string> from_scan = gate ? gate->Expiry(d) : std::nullopt;
    sql += "\nUNION ALL\n" + (from_scan ? *from_scan : ExpiryBranch(d, filter));
  }
  return sql;
}

}  // namespace

CompiledCheck CompileCheck(const std::string& check, const std::vector<Declaration>& declarations) {
  CompiledCheck out;
  out.name = check;
  out.labels = declarations.at(0).labels;
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
  BalanceGate gate(declarations, KeyFilter{});
  out.full_sql = Pass(declarations, KeyFilter{}, gate.empty() ? nullptr : &gate);
  if (out.labels.size() != 1) {
    out.not_incremental = "its key has " + std::to_string(out.labels.size()) +
                          " columns; incremental mode takes a key of one column";
    return out;
  }
  for (const auto& d : declarations) {
    for (const auto& table : SqlOf(d).Tables(d)) {
      std::string name = TableText(table.table);
      auto [it, added] = out.tables.emplace(name, table.key_columns.at(0));
      if (!added && it->second != table.key_columns.at(0)) {
        throw DeclarationError("key", "reads " + name + " by key column \"" + it->second +
                                          "\" in one entry of check \"" + check + "\" and \"" +
                                          table.key_columns.at(0) +
                                          "\" in another: the change feed maps a table to one key",
                               d.name);
      }
    }
  }
  // The dirty keys of a recheck balance as the whole table does: a
  // recheck reads each table once for them, and exactly only the keys
  // out of balance.
  KeyFilter dirty{{1}, ""};
  BalanceGate scoped_gate(declarations, dirty);
  out.scoped_sql = Pass(declarations, dirty, scoped_gate.empty() ? nullptr : &scoped_gate);
  return out;
}

}  // namespace seatwatch::declare
