#include "declare/balance_gate.h"

#include <algorithm>
#include <utility>

#include "declare/compiled_check.h"
#include "declare/identifier.h"
#include "declare/kind_sql.h"
#include "declare/sql_text.h"

namespace seatwatch::declare {

namespace {

bool SameTable(const TableName& a, const TableName& b) {
  return a.schema == b.schema && a.name == b.name;
}

bool SameSide(const BalanceSide& a, const BalanceSide& b) {
  return SameTable(a.table, b.table) && a.key == b.key && a.columns == b.columns &&
         a.where == b.where;
}

std::string Numbered(const std::string& stem, size_t i) { return stem + std::to_string(i + 1); }

// " FILTER (WHERE ...)" for `where` and more conditions; "" for none.
std::string Filter(const std::string& where, const std::string& more = "") {
  std::string condition = where.empty() ? "" : Pasted(where);
  if (!more.empty()) condition += (condition.empty() ? "" : " AND ") + more;
  return condition.empty() ? "" : " FILTER (WHERE " + condition + ")";
}

// "\n  WHERE ..." for the conditions of a KeyFilter (" AND ..."); "" for none.
std::string Where(const std::string& conditions) {
  const std::string lead = " AND ";
  if (conditions.empty()) return "";
  return "\n  WHERE " + conditions.substr(lead.size());
}

// "a.k1 = b.k1 AND ..." over `n` key columns.
std::string KeysEqual(const std::string& a, const std::string& b, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    std::string k = Numbered("k", i);
    out += (out.empty() ? "" : " AND ") + a + "." + k + " = " + b + "." + k;
  }
  return out;
}

// "a.k1 IS NULL OR ..." (or IS NOT NULL AND) over `n` key columns.
std::string KeysNull(const std::string& a, size_t n, bool null) {
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out += (out.empty() ? "" : null ? " OR " : " AND ") + a + "." + Numbered("k", i) +
           (null ? " IS NULL" : " IS NOT NULL");
  }
  return out;
}

std::string KeyColumns(const std::string& alias, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += (out.empty() ? "" : ", ") + alias + "." + Numbered("k", i);
  return out;
}

// Whether two sides that balance (`x` with `y`) prove that `b`'s sides
// do: the same rows of the same tables, and each column pair of `b` is a
// column pair of theirs (the same multiset of wider rows has the same
// multiset of any of their columns).
bool Covers(const BalanceSide& x, const BalanceSide& y, const Balance& b) {
  auto same_rows = [](const BalanceSide& p, const BalanceSide& q) {
    return SameTable(p.table, q.table) && p.key == q.key && p.where == q.where;
  };
  if (!same_rows(x, b.rows) || !same_rows(y, b.in)) return false;
  for (size_t i = 0; i < b.rows.columns.size(); ++i) {
    bool paired = false;
    for (size_t p = 0; p < x.columns.size() && !paired; ++p) {
      paired = x.columns[p] == b.rows.columns[i] && y.columns[p] == b.in.columns[i];
    }
    if (!paired) return false;
  }
  return true;
}

// The columns of `y` that pair with `distinct`'s (its key and its
// columns) when `distinct` holds the rows of side `x`; nullopt when it does
// not, or a column of it is not compared by the pair.
std::optional<std::vector<std::string>> PairedColumns(const BalanceSide& x, const BalanceSide& y,
                                                      const BalanceSide& distinct) {
  if (!SameTable(x.table, distinct.table) || x.key != distinct.key ||
      x.where != distinct.where) {
    return std::nullopt;
  }
  std::vector<std::string> paired = y.key;
  for (const auto& column : distinct.columns) {
    auto at = std::find(x.columns.begin(), x.columns.end(), column);
    if (at == x.columns.end()) return std::nullopt;
    paired.push_back(y.columns[static_cast<size_t>(at - x.columns.begin())]);
  }
  return paired;
}

// Whether `table` has a unique index, immediate, with no predicate and no
// expression, whose key columns are all among `columns`: then no two of its
// rows with those columns set are equal on them.
std::string DistinctProofSql(const TableName& table, const std::vector<std::string>& columns) {
  std::string names;
  for (const auto& column : columns) names += (names.empty() ? "" : ", ") + Literal(column);
  return "  SELECT EXISTS (\n    SELECT 1 FROM pg_catalog.pg_index AS x\n"
         "    WHERE x.indrelid = to_regclass(" + Literal(QuoteTable(table)) +
         ") AND x.indisunique AND x.indimmediate\n"
         "      AND x.indpred IS NULL AND x.indexprs IS NULL\n"
         "      AND NOT EXISTS (\n"
         "        SELECT 1 FROM unnest(x.indkey::int2[]) WITH ORDINALITY AS k(attnum, n)\n"
         "        JOIN pg_catalog.pg_attribute AS a\n"
         "          ON a.attrelid = x.indrelid AND a.attnum = k.attnum\n"
         "        WHERE k.n <= x.indnkeyatts AND a.attname <> ALL (ARRAY[" + names +
         "]::name[]))\n  ) AS proven";
}

}  // namespace

// The 64-bit hash of a row's compared columns, in their order (a row with
// a NULL among them hashes to NULL, and a sum skips it). Text is how every
// type compares here: two values with one text are equal, and two equal
// values with different texts (1.0 and 1.00) only put a key out of balance.
std::string RowHash(const std::vector<std::string>& columns) {
  std::string hash = "0";
  for (const auto& column : columns) {
    hash = "hashtextextended(" + Col("t", column) + "::text, " + hash + ")";
  }
  return hash;
}

BalanceGate::BalanceGate(const std::vector<Declaration>& declarations,
                         const std::vector<MetricDeclaration>& metrics, KeyFilter filter)
    : filter_(std::move(filter)) {
  struct Entry {
    size_t index;
    Balance balance;
  };
  std::vector<Entry> entries;
  for (size_t i = 0; i < declarations.size(); ++i) {
    const Declaration& d = declarations[i];
    if (auto balance = KindNamed(d.kind)->BalanceOf(d)) entries.push_back({i, *balance});
  }
  // Wider pairs first: their balance also proves each narrower pair they
  // cover, which then needs no hash of its own.
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.balance.rows.columns.size() > b.balance.rows.columns.size();
  });
  struct Pair {
    Balance balance;
    SideAt rows;
    SideAt in;
  };
  std::vector<Pair> pairs;
  std::vector<std::pair<size_t, Gated>> gated;
  for (const auto& [index, balance] : entries) {
    std::optional<Gated> found;
    for (const auto& pair : pairs) {
      if (Covers(pair.balance.rows, pair.balance.in, balance)) {
        found = Gated{pair.rows, pair.in, "", "", ""};
      } else if (Covers(pair.balance.in, pair.balance.rows, balance)) {
        found = Gated{pair.in, pair.rows, "", "", ""};
      }
      if (found) break;
    }
    if (!found) {
      pairs.push_back({balance, Add(balance.rows), Add(balance.in)});
      found = Gated{pairs.back().rows, pairs.back().in, "", "", ""};
    }
    found->unbalanced = Numbered("seatwatch_unbalanced_", index);
    gated.emplace_back(index, *found);
  }
  for (size_t i = 0; i < declarations.size(); ++i) {
    const Declaration& d = declarations[i];
    auto distinct = KindNamed(d.kind)->DistinctOf(d);
    if (!distinct) continue;
    for (const auto& pair : pairs) {
      std::optional<Gated> found;
      for (bool flipped : {false, true}) {
        const BalanceSide& x = flipped ? pair.balance.in : pair.balance.rows;
        const BalanceSide& y = flipped ? pair.balance.rows : pair.balance.in;
        auto paired = PairedColumns(x, y, *distinct);
        if (!paired) continue;
        found = Gated{flipped ? pair.in : pair.rows, flipped ? pair.rows : pair.in,
                      Numbered("seatwatch_unbalanced_", i), Numbered("seatwatch_distinct_", i),
                      ""};
        found->proof_sql = DistinctProofSql(y.table, *paired);
        break;
      }
      if (!found) continue;
      gated.emplace_back(i, *found);
      break;
    }
  }
  std::sort(gated.begin(), gated.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [index, g] : gated) gated_.emplace_back(declarations[index].name, g);
  for (const auto& d : declarations) {
    if (!d.rows.expires.empty()) AddExpiry(d.rows.table, d.key, d.rows.expires);
  }
  for (const auto& metric : metrics) {
    std::vector<TallyAt> at;
    for (const auto& tally : metric.tallies) {
      size_t s = ScanOf(tally.rows.table, tally.rows.columns);
      at.push_back({s, CountIn(scans_[s], tally.rows)});
      if (!tally.rows.expires.empty()) {
        AddExpiry(tally.rows.table, tally.rows.columns, tally.rows.expires);
      }
    }
    tallies_.emplace_back(metric.name, std::move(at));
  }
}

std::string BalanceGate::CountIn(Scan& scan, const RowSet& rows) {
  if (rows.sum.empty()) {
    for (size_t j = 0; j < scan.sides.size(); ++j) {
      if (scan.sides[j].where == rows.where) return Numbered("rows_", j);
    }
  }
  size_t c = 0;
  while (c < scan.counts.size() &&
         !(scan.counts[c].where == rows.where && scan.counts[c].sum == rows.sum)) {
    ++c;
  }
  if (c == scan.counts.size()) scan.counts.push_back({rows.where, rows.sum});
  return Numbered("count_", c);
}

size_t BalanceGate::ScanOf(const TableName& table, const std::vector<std::string>& key) {
  for (size_t s = 0; s < scans_.size(); ++s) {
    if (SameTable(scans_[s].table, table) && scans_[s].key == key) return s;
  }
  scans_.push_back({Numbered("seatwatch_scan_", scans_.size()), table, key, {}, {}, {}});
  return scans_.size() - 1;
}

// Only on a scan the check makes anyway: an expiry alone is no reason for
// one (the pass then reads it with a query of its own).
void BalanceGate::AddExpiry(const TableName& table, const std::vector<std::string>& key,
                            const std::string& expires) {
  for (auto& scan : scans_) {
    if (!SameTable(scan.table, table) || scan.key != key) continue;
    bool known = false;
    for (const auto& e : scan.expiries) known = known || e == expires;
    if (!known) scan.expiries.push_back(expires);
    return;
  }
}

BalanceGate::SideAt BalanceGate::Add(const BalanceSide& side) {
  for (size_t s = 0; s < scans_.size(); ++s) {
    Scan& scan = scans_[s];
    if (!SameTable(scan.table, side.table) || scan.key != side.key) continue;
    for (size_t j = 0; j < scan.sides.size(); ++j) {
      if (SameSide(scan.sides[j], side)) return {s, j};
    }
    scan.sides.push_back(side);
    return {s, scan.sides.size() - 1};
  }
  scans_.push_back({Numbered("seatwatch_scan_", scans_.size()), side.table, side.key, {side}, {}, {}});
  return {scans_.size() - 1, 0};
}

std::string BalanceGate::ScanSql(const Scan& scan) const {
  std::string select;
  for (size_t i = 0; i < scan.key.size(); ++i) {
    select += Col("t", scan.key[i]) + " AS " + Numbered("k", i) + ",\n         ";
  }
  for (size_t j = 0; j < scan.sides.size(); ++j) {
    const BalanceSide& side = scan.sides[j];
    select += "count(*)" + Filter(side.where) + " AS " + Numbered("rows_", j) + ",\n         ";
    if (side.columns.empty()) continue;  // the key alone: counts say it all
    select += "count(*)" + Filter(side.where, NotNull("t", side.columns)) + " AS " +
              Numbered("hashed_", j) + ",\n         sum(" + RowHash(side.columns) + ")" +
              Filter(side.where) + " AS " + Numbered("hash_", j) + ",\n         ";
  }
  for (size_t c = 0; c < scan.counts.size(); ++c) {
    const Count& count = scan.counts[c];
    select += (count.sum.empty() ? "count(*)" : "sum(" + Pasted(count.sum) + ")") +
              Filter(count.where) + " AS " + Numbered("count_", c) + ",\n         ";
  }
  for (size_t e = 0; e < scan.expiries.size(); ++e) {
    std::string column = Col("t", scan.expiries[e]);
    select += "extract(epoch FROM min(" + column + ") FILTER (WHERE " + column +
              " > now()))::float8 AS " + Numbered("expiry_", e) + ",\n         ";
  }
  select.erase(select.size() - std::string(",\n         ").size());
  return scan.name + " AS MATERIALIZED (\n  SELECT " + select + "\n  FROM " +
         From(scan.table, "t") + Where(filter_.On("t", scan.key)) + "\n  GROUP BY " +
         Cols("t", scan.key) + "\n)";
}

std::string BalanceGate::UnbalancedSql(const Gated& gated) const {
  const Scan& a = scans_[gated.rows.scan];
  const Scan& b = scans_[gated.in.scan];
  const BalanceSide& side = a.sides[gated.rows.side];
  size_t n = a.key.size();
  std::string rows = "a." + Numbered("rows_", gated.rows.side);
  std::string in_rows = "b." + Numbered("rows_", gated.in.side);
  std::string balanced = in_rows + " = " + rows;
  if (!side.columns.empty()) {
    balanced = "a." + Numbered("hashed_", gated.rows.side) + " = " + rows + " AND " + balanced +
               " AND b." + Numbered("hashed_", gated.in.side) + " = " + in_rows + " AND b." +
               Numbered("hash_", gated.in.side) + " = a." + Numbered("hash_", gated.rows.side);
  }
  return gated.unbalanced + " AS MATERIALIZED (\n  SELECT " + KeyColumns("a", n) + "\n  FROM " +
         a.name + " AS a LEFT JOIN " + b.name + " AS b ON " + KeysEqual("a", "b", n) +
         "\n  WHERE " + rows + " > 0 AND " + KeysNull("a", n, false) + "\n    AND (" + balanced +
         ") IS NOT TRUE\n)";
}

std::string BalanceGate::With() const {
  if (empty()) return "";
  std::string sql = "-- One scan of each table: each side's rows counted and hashed by key.\nWITH ";
  for (const auto& scan : scans_) sql += ScanSql(scan) + ",\n";
  if (!gated_.empty()) sql += "-- The keys whose sides differ: read exactly.\n";
  for (const auto& [name, gated] : gated_) {
    sql += UnbalancedSql(gated) + ",\n";
    if (!gated.proof.empty()) {
      sql += "-- " + name + ": its rows balance rows a unique index keeps distinct\n" +
             gated.proof + " AS MATERIALIZED (\n" + gated.proof_sql + "\n),\n";
    }
  }
  sql.erase(sql.size() - 2);
  return sql + "\n";
}

std::optional<std::string> BalanceGate::Violations(const Declaration& d) const {
  auto it = std::find_if(gated_.begin(), gated_.end(),
                         [&](const auto& entry) { return entry.first == d.name; });
  if (it == gated_.end()) return std::nullopt;
  const Gated& gated = it->second;
  const Scan& scan = scans_[gated.rows.scan];
  size_t n = scan.key.size();
  KeyFilter one_key;
  one_key.row = "u";
  std::string labels;
  for (size_t i = 0; i < n; ++i) {
    labels += "s." + Numbered("k", i) + " AS " + QuoteIdentifier(d.labels[i]) + ", ";
  }
  std::string rows = "s." + Numbered("rows_", gated.rows.side);
  std::string unbalanced = "SELECT v.*\nFROM " + gated.unbalanced +
                           " AS u CROSS JOIN LATERAL (\n" +
                           Indented(KindNamed(d.kind)->Violations(d, one_key)) + "\n) AS v";
  if (!gated.proof.empty()) {
    // A NULL key or column is never a duplicate: nothing to add for it.
    std::string proven = "(SELECT proven FROM " + gated.proof + ")";
    return unbalanced + "\nWHERE " + proven +
           "\nUNION ALL\n-- no such index: every key read exactly\nSELECT w.*\nFROM (\n" +
           Indented(KindNamed(d.kind)->Violations(d, filter_)) + "\n) AS w\nWHERE NOT " +
           proven;
  }
  return unbalanced +
         "\nUNION ALL\n-- a NULL key matches nothing: all its rows are violations\nSELECT " +
         labels + rows + " AS " + kViolationsColumn + "\nFROM " + scan.name + " AS s\nWHERE " +
         rows + " > 0 AND (" + KeysNull("s", n, true) + ")";
}

std::string BalanceGate::ExpirySql(const TableName& table, const std::vector<std::string>& key,
                                   const std::string& expires,
                                   const std::vector<std::string>& labels,
                                   const std::string& what, const std::string& tail) const {
  for (const auto& scan : scans_) {
    if (!SameTable(scan.table, table) || scan.key != key) continue;
    for (size_t e = 0; e < scan.expiries.size(); ++e) {
      if (scan.expiries[e] != expires) continue;
      std::string columns;
      for (size_t i = 0; i < key.size(); ++i) {
        columns += "s." + Numbered("k", i) + "::text AS " + QuoteIdentifier(labels[i]) + ", ";
      }
      std::string expiry = "s." + Numbered("expiry_", e);
      return "-- " + what + ": when each key's next " + expires + " passes (from the scan of " +
             TableText(table) + ")\nSELECT " + columns + "NULL::text AS " + kInvariantColumn +
             ", NULL::float8 AS " + kViolationsColumn + ", " + expiry + " AS " + kExpiryColumn +
             tail + "\nFROM " + scan.name + " AS s\nWHERE " + expiry + " IS NOT NULL";
    }
  }
  return "";
}

std::optional<std::string> BalanceGate::Expiry(const Declaration& d,
                                               const std::string& tail) const {
  if (d.rows.expires.empty()) return std::nullopt;
  std::string sql = ExpirySql(d.rows.table, d.key, d.rows.expires, d.labels, d.name, tail);
  if (sql.empty()) return std::nullopt;
  return sql;
}

std::vector<const Tally*> BalanceGate::UnreportedExpiries(
    const MetricDeclaration& metric, const std::vector<Declaration>& declarations) {
  std::vector<const Tally*> out;
  std::vector<std::pair<TableName, std::string>> reported;
  for (const auto& d : declarations) {
    if (!d.rows.expires.empty()) reported.emplace_back(d.rows.table, d.rows.expires);
  }
  for (const auto& tally : metric.tallies) {
    const RowSet& rows = tally.rows;
    if (rows.expires.empty()) continue;
    bool known = false;
    for (const auto& [table, expires] : reported) {
      known = known || (SameTable(table, rows.table) && expires == rows.expires);
    }
    if (known) continue;
    reported.emplace_back(rows.table, rows.expires);
    out.push_back(&tally);
  }
  return out;
}

std::string BalanceGate::TallyExpiry(const MetricDeclaration& metric,
                                     const std::vector<Declaration>& declarations,
                                     const std::string& tail) const {
  std::string sql;
  for (const Tally* tally : UnreportedExpiries(metric, declarations)) {
    const RowSet& rows = tally->rows;
    std::string branch =
        ExpirySql(rows.table, rows.columns, rows.expires, metric.labels, metric.name, tail);
    if (!branch.empty()) sql += "\nUNION ALL\n" + branch;
  }
  return sql;
}

std::string BalanceGate::TallyFrom(const MetricDeclaration& metric) const {
  auto it = std::find_if(tallies_.begin(), tallies_.end(),
                         [&](const auto& entry) { return entry.first == metric.name; });
  const std::vector<TallyAt>& at = it->second;
  size_t n = metric.key.size();
  std::vector<size_t> scans;
  for (const auto& tally : at) {
    if (std::find(scans.begin(), scans.end(), tally.scan) == scans.end()) scans.push_back(tally.scan);
  }
  std::string keys;
  for (size_t s : scans) {
    keys += std::string(keys.empty() ? "" : "\n  UNION\n") + "  SELECT " + KeyColumns("x", n) +
            " FROM " + scans_[s].name + " AS x";
  }
  std::string sql = "FROM (\n" + keys + "\n) AS m";
  for (size_t s : scans) {
    std::string alias = Numbered("s", s);
    sql += "\nLEFT JOIN " + scans_[s].name + " AS " + alias + " ON " + KeysEqual(alias, "m", n);
  }
  sql += "\nCROSS JOIN LATERAL (VALUES";
  for (size_t i = 0; i < at.size(); ++i) {
    sql += std::string(i ? "," : "") + "\n  (" + Literal(metric.tallies[i].name) + ", coalesce(" +
           Numbered("s", at[i].scan) + "." + at[i].column + ", 0)::float8)";
  }
  return sql + "\n) AS t(tally, value)\nWHERE " + KeysNull("m", n, false);
}

}  // namespace seatwatch::declare
