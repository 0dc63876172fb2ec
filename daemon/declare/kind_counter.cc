// counter: a stored count (`column` of `table`, the row keyed by `columns`)
// against the rows that reference it (`rows`, matched on rows.columns):
// the absolute difference. No rows counts 0; a NULL counter counts 0.
#include "declare/kind_sql.h"

namespace seatwatch::declare {

namespace {

class CounterSql final : public KindSql {
 public:
  std::vector<std::string> Fields() const override {
    return {"table", "columns", "column", "rows"};
  }

  void Validate(const Declaration& d) const override {
    if (!d.counted || d.counted->table.name.empty()) {
      throw DeclarationError("table", "is required by kind counter: the table holding the counter");
    }
    if (d.counted->columns.empty()) {
      throw DeclarationError("columns", "is required by kind counter: the counted row's key");
    }
    if (d.counted->column.empty()) {
      throw DeclarationError("column", "is required by kind counter: the counter column");
    }
    RequireColumns(d.rows, "rows", true);
    RefuseFields(d.rows, "rows", {"expires", "column"}, "counter");
    if (d.rows.columns.size() != d.counted->columns.size()) {
      throw DeclarationError("rows.columns", "must have as many columns as columns (" +
                                                 std::to_string(d.counted->columns.size()) + ")");
    }
    KeyWithin(d, d.counted->columns, "columns");
  }

  std::string Violations(const Declaration& d, const KeyFilter& filter) const override {
    return "SELECT " + KeyAsLabels("t", d.key, d.labels) + ", sum(abs(" + Difference(d) +
           ")) AS seatwatch_violations\n" + Drifted(d, filter) + "\nGROUP BY " + Cols("t", d.key);
  }

  std::string Detail(const Declaration& d, const KeyFilter& filter) const override {
    std::vector<std::string> order = d.key;
    for (const auto& column : d.counted->columns) order.push_back(column);
    return "SELECT t.*, coalesce(c.seatwatch_count, 0) AS seatwatch_count, " + Difference(d) +
           " AS seatwatch_difference\n" + Drifted(d, filter) + OrderBy("t", order);
  }

  std::vector<KeyedTable> Tables(const Declaration& d) const override {
    auto positions = KeyWithin(d, d.counted->columns, "columns");
    return {{d.counted->table, d.key}, {d.rows.table, At(d.rows.columns, positions)}};
  }

 private:
  static std::string Difference(const Declaration& d) {
    return "coalesce(" + Col("t", d.counted->column) + ", 0) - coalesce(c.seatwatch_count, 0)";
  }

  static std::string Drifted(const Declaration& d, const KeyFilter& filter) {
    auto positions = KeyWithin(d, d.counted->columns, "columns");
    std::string amount = d.rows.sum.empty() ? "count(*)" : "coalesce(sum(" + Pasted(d.rows.sum) + "), 0)";
    std::string where = d.rows.where.empty() ? "" : Pasted(d.rows.where) + "\n    AND ";
    return "FROM " + From(d.counted->table, "t") + "\nLEFT JOIN (SELECT " +
           Cols("r", d.rows.columns) + ", " + amount + " AS seatwatch_count\n    FROM " +
           From(d.rows.table, "r") + "\n    WHERE " + where + NotNull("r", d.rows.columns) +
           filter.On("r", At(d.rows.columns, positions)) + "\n    GROUP BY " +
           Cols("r", d.rows.columns) + ") AS c ON " +
           Equal("c", d.rows.columns, "t", d.counted->columns) + "\nWHERE coalesce(" +
           Col("t", d.counted->column) + ", 0) <> coalesce(c.seatwatch_count, 0)" +
           filter.On("t", d.key);
  }
};

}  // namespace

const KindSql& CounterKind() {
  static const CounterSql kind;
  return kind;
}

}  // namespace seatwatch::declare
