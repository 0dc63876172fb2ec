#include "declare/row_terms.h"

#include <algorithm>

#include "declare/balance_gate.h"
#include "declare/sql_text.h"

namespace seatwatch::declare {

namespace {

bool SameTable(const TableName& a, const TableName& b) {
  return a.schema == b.schema && a.name == b.name;
}

// "(...) IS TRUE" of `where` and `more`: a NULL verdict counts as false, as
// in an aggregate's FILTER; "true" for no condition.
std::string Flag(const std::string& where, const std::string& more = "") {
  std::string condition = where.empty() ? "" : Pasted(where);
  if (!more.empty()) condition += (condition.empty() ? "" : " AND ") + more;
  return condition.empty() ? "true" : "(" + condition + ") IS TRUE";
}

class Compiler {
 public:
  Compiler(const std::vector<Declaration>& declarations,
           const std::vector<MetricDeclaration>& metrics)
      : declarations_(declarations), metrics_(metrics), gate_(declarations, metrics, KeyFilter{}) {}

  RowTerms Compile() {
    for (const auto& scan : gate_.scans()) AddScan(scan);
    for (const auto& d : declarations_) AddViolations(d);
    for (const auto& d : declarations_) {
      if (d.rows.expires.empty()) continue;
      auto at = ExpiryOf(d.rows.table, d.key, d.rows.expires);
      if (!at) return Refuse("entry " + d.name + ": its expiry is not read from a scan");
      out_.expiries.push_back(*at);
    }
    for (size_t i = 0; i < metrics_.size(); ++i) AddMetric(i);
    if (!out_.not_row_wise.empty()) {
      std::string why = out_.not_row_wise;
      out_ = RowTerms{};
      out_.not_row_wise = why;
    }
    return out_;
  }

 private:
  RowTerms Refuse(const std::string& why) {
    if (out_.not_row_wise.empty()) out_.not_row_wise = why;
    return out_;
  }

  static int Term(RowTerms::Table& table, std::string sql) {
    table.terms.push_back(std::move(sql));
    return static_cast<int>(table.terms.size()) - 1;
  }

  void AddScan(const BalanceGate::Scan& scan) {
    RowTerms::Table table;
    table.table = scan.table;
    if (scan.key.size() != 1) Refuse("a key of more than one column");
    table.key = scan.key.empty() ? "" : scan.key[0];
    for (const auto& side : scan.sides) {
      RowTerms::Table::Side at;
      at.rows = Term(table, Flag(side.where));
      if (!side.columns.empty()) {
        at.hashed = Term(table, Flag(side.where, NotNull("t", side.columns)));
        at.hash = Term(table, RowHash(side.columns));
      }
      table.sides.push_back(at);
    }
    for (const auto& count : scan.counts) {
      if (!count.sum.empty()) Refuse("a tally sums " + count.sum + " rather than counting rows");
      table.counts.push_back(Term(table, Flag(count.where)));
    }
    for (const auto& column : scan.expiries) {
      RowTerms::Table::Expiry expiry;
      expiry.column = column;
      expiry.epoch = Term(table, "extract(epoch FROM " + Col("t", column) + ")::float8");
      expiry.future = Term(table, Flag("", Col("t", column) + " > now()"));
      table.expiries.push_back(expiry);
    }
    out_.tables.push_back(std::move(table));
  }

  size_t TableFor(const TableName& name, const std::string& key) {
    for (size_t t = 0; t < out_.tables.size(); ++t) {
      if (SameTable(out_.tables[t].table, name) && out_.tables[t].key == key) return t;
    }
    RowTerms::Table table;
    table.table = name;
    table.key = key;
    out_.tables.push_back(std::move(table));
    return out_.tables.size() - 1;
  }

  void AddViolations(const Declaration& d) {
    RowTerms::Violations violations;
    for (const auto& [invariant, gated] : gate_.gated()) {
      if (invariant != d.name) continue;
      RowTerms::Gate gate;
      gate.invariant = d.name;
      gate.rows_table = gated.rows.scan;
      gate.rows_side = gated.rows.side;
      gate.in_table = gated.in.scan;
      gate.in_side = gated.in.side;
      if (!gated.proof.empty()) {
        out_.proofs.push_back(gated.proof_sql);
        gate.proof = static_cast<int>(out_.proofs.size()) - 1;
      }
      violations.gate = gate;
    }
    if (!violations.gate) {
      if (d.kind != "at_most" || !d.limit || d.limit_rows || !d.rows.sum.empty() ||
          d.key.size() != 1) {
        Refuse("entry " + d.name + " (" + d.kind + ") is read whole");
        return;
      }
      RowTerms::Limit limit;
      limit.invariant = d.name;
      limit.limit = *d.limit;
      limit.table = TableFor(d.rows.table, d.key[0]);
      RowTerms::Table& table = out_.tables[limit.table];
      limit.flag = Term(table, Flag(d.rows.where, NotNull("t", d.rows.columns)));
      for (const auto& column : d.rows.columns) {
        if (column == d.key[0]) continue;
        limit.groups.push_back(Term(table, Col("t", column) + "::text"));
      }
      violations.limit = limit;
    }
    out_.violations.push_back(violations);
  }

  std::optional<RowTerms::ExpiryAt> ExpiryOf(const TableName& name,
                                            const std::vector<std::string>& key,
                                            const std::string& expires) const {
    const auto& scans = gate_.scans();
    for (size_t s = 0; s < scans.size(); ++s) {
      if (!SameTable(scans[s].table, name) || scans[s].key != key) continue;
      for (size_t e = 0; e < scans[s].expiries.size(); ++e) {
        if (scans[s].expiries[e] == expires) return RowTerms::ExpiryAt{s, e};
      }
    }
    return std::nullopt;
  }

  void AddMetric(size_t i) {
    const MetricDeclaration& m = metrics_[i];
    if (std::find(out_.tail_labels.begin(), out_.tail_labels.end(), m.label) ==
        out_.tail_labels.end()) {
      out_.tail_labels.push_back(m.label);
    }
    RowTerms::Metric metric;
    metric.label = m.label;
    const auto& at = gate_.tallies().at(i).second;
    for (size_t t = 0; t < at.size(); ++t) {
      const auto& tally = at[t];
      RowTerms::Metric::TallyAt out{m.tallies[t].name, tally.scan, -1};
      const RowTerms::Table& table = out_.tables.at(tally.scan);
      size_t index = std::stoul(tally.column.substr(tally.column.rfind('_') + 1)) - 1;
      if (tally.column.rfind("rows_", 0) == 0) {
        out.flag = table.sides.at(index).rows;
      } else {
        out.flag = index < table.counts.size() ? table.counts[index] : -1;
      }
      metric.tallies.push_back(out);
      if (std::find(metric.tables.begin(), metric.tables.end(), tally.scan) == metric.tables.end()) {
        metric.tables.push_back(tally.scan);
      }
    }
    for (const Tally* tally : BalanceGate::UnreportedExpiries(m, declarations_)) {
      const RowSet& rows = tally->rows;
      if (auto expiry = ExpiryOf(rows.table, rows.columns, rows.expires)) {
        metric.expiries.push_back(*expiry);
      }
    }
    out_.metrics.push_back(std::move(metric));
  }

  const std::vector<Declaration>& declarations_;
  const std::vector<MetricDeclaration>& metrics_;
  BalanceGate gate_;
  RowTerms out_;
};

}  // namespace

RowTerms CompileRowTerms(const std::vector<Declaration>& declarations,
                         const std::vector<MetricDeclaration>& metrics) {
  return Compiler(declarations, metrics).Compile();
}

}  // namespace seatwatch::declare
