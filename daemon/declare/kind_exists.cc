// exists: rows of `rows` with no row of `in` whose columns are equal. NULL
// never matches, so a row with a NULL compared column is a violation.
#include <algorithm>

#include "declare/kind_sql.h"

namespace seatwatch::declare {

namespace {

class ExistsSql final : public KindSql {
 public:
  std::vector<std::string> Fields() const override { return {"rows", "in"}; }

  void Validate(const Declaration& d) const override {
    RequireColumns(d.rows, "rows", true);
    RefuseFields(d.rows, "rows", {"sum", "column"}, "exists");
    if (!d.in) throw DeclarationError("in", "is required by kind exists: where a match is looked for");
    RequireColumns(*d.in, "in", true);
    RefuseFields(*d.in, "in", {"sum", "expires", "column"}, "exists");
    if (d.in->columns.size() != d.rows.columns.size()) {
      throw DeclarationError("in.columns", "must have as many columns as rows.columns (" +
                                               std::to_string(d.rows.columns.size()) + ")");
    }
    KeyWithin(d, d.rows.columns, "rows.columns");
  }

  std::string Violations(const Declaration& d, const KeyFilter& filter) const override {
    return "SELECT " + KeyAsLabels("r", d.key, d.labels) +
           ", count(*) AS seatwatch_violations\n" + Missing(d, filter) + "\nGROUP BY " +
           Cols("r", d.key);
  }

  std::string Detail(const Declaration& d, const KeyFilter& filter) const override {
    std::vector<std::string> order = d.key;
    for (const auto& column : d.rows.columns) order.push_back(column);
    return "SELECT r.*\n" + Missing(d, filter) + OrderBy("r", order);
  }

  std::vector<KeyedTable> Tables(const Declaration& d) const override {
    auto positions = KeyWithin(d, d.rows.columns, "rows.columns");
    return {{d.rows.table, d.key}, {d.in->table, At(d.in->columns, positions)}};
  }

  // Every row of `rows` has its match when `in` holds the very same rows
  // (compared by the columns beyond the key). The converse does not hold:
  // a key out of balance is read exactly, and may have no violation.
  std::optional<Balance> BalanceOf(const Declaration& d) const override {
    auto positions = KeyWithin(d, d.rows.columns, "rows.columns");
    Balance balance;
    balance.rows = {d.rows.table, d.key, {}, d.rows.where};
    balance.in = {d.in->table, At(d.in->columns, positions), {}, d.in->where};
    for (size_t i = 0; i < d.rows.columns.size(); ++i) {
      if (std::find(positions.begin(), positions.end(), i) != positions.end()) continue;
      balance.rows.columns.push_back(d.rows.columns[i]);
      balance.in.columns.push_back(d.in->columns[i]);
    }
    return balance;
  }

 private:
  // FROM ... WHERE: the rows of `rows` (of the filter's keys) with no match.
  static std::string Missing(const Declaration& d, const KeyFilter& filter) {
    const RowSet& in = *d.in;
    auto positions = KeyWithin(d, d.rows.columns, "rows.columns");
    std::string match = Equal("i", in.columns, "r", d.rows.columns);
    if (!in.where.empty()) match += " AND " + Pasted(in.where);
    // Implied by the equality; said so that the planner reads only those keys.
    match += filter.On("i", At(in.columns, positions));
    std::string where = d.rows.where.empty() ? "" : Pasted(d.rows.where) + "\n  AND ";
    return "FROM " + From(d.rows.table, "r") + "\nWHERE " + where + "NOT EXISTS (SELECT 1 FROM " +
           From(in.table, "i") + " WHERE " + match + ")" + filter.On("r", d.key);
  }
};

}  // namespace

const KindSql& ExistsKind() {
  static const ExistsSql kind;
  return kind;
}

}  // namespace seatwatch::declare
