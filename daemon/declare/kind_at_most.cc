// at_most: groups of `rows.columns` whose row count (or sum of `sum`)
// exceeds the limit: a number, or a column of a limit table matched on
// `limit.columns`. A NULL group is skipped; a group whose limit row is
// missing or NULL is no violation.
#include "declare/kind_sql.h"

namespace seatwatch::declare {

namespace {

class AtMostSql final : public KindSql {
 public:
  std::vector<std::string> Fields() const override { return {"rows", "limit"}; }

  void Validate(const Declaration& d) const override {
    RequireColumns(d.rows, "rows", true);
    RefuseFields(d.rows, "rows", {"column"}, "at_most");
    KeyWithin(d, d.rows.columns, "rows.columns");
    if (!d.limit && !d.limit_rows) {
      throw DeclarationError("limit", "is required by kind at_most: a number, or { table, columns, column }");
    }
    if (d.limit && *d.limit < 0) throw DeclarationError("limit", "must not be negative");
    if (d.limit_rows) {
      RequireColumns(*d.limit_rows, "limit", true);
      RefuseFields(*d.limit_rows, "limit", {"where", "sum", "expires"}, "at_most");
      if (d.limit_rows->columns.size() != d.rows.columns.size()) {
        throw DeclarationError("limit.columns", "must have as many columns as rows.columns (" +
                                                    std::to_string(d.rows.columns.size()) + ")");
      }
      if (d.limit_rows->column.empty()) {
        throw DeclarationError("limit.column", "is required: the column holding the limit");
      }
    }
  }

  std::string Violations(const Declaration& d, const KeyFilter& filter) const override {
    return "SELECT " + KeyAsLabels("g", d.key, d.labels) +
           ", count(*) AS seatwatch_violations\n" + OverLimit(d, filter, false) + "\nGROUP BY " +
           Cols("g", d.key);
  }

  std::string Detail(const Declaration& d, const KeyFilter& filter) const override {
    std::vector<std::string> order = d.key;
    for (const auto& column : d.rows.columns) order.push_back(column);
    return "SELECT " + Cols("g", d.rows.columns) + ", g.seatwatch_count, " + LimitOf(d) +
           " AS seatwatch_limit\n" + OverLimit(d, filter, true) + OrderBy("g", order);
  }

  std::vector<KeyedTable> Tables(const Declaration& d) const override {
    std::vector<KeyedTable> tables = {{d.rows.table, d.key}};
    if (d.limit_rows) {
      auto positions = KeyWithin(d, d.rows.columns, "rows.columns");
      tables.push_back({d.limit_rows->table, At(d.limit_rows->columns, positions)});
    }
    return tables;
  }

 private:
  static std::string LimitOf(const Declaration& d) {
    return d.limit_rows ? Col("l", d.limit_rows->column) : Number(*d.limit);
  }

  // FROM ... WHERE: the groups over their limit, as `g`.
  static std::string OverLimit(const Declaration& d, const KeyFilter& filter, bool detail) {
    std::string amount = d.rows.sum.empty() ? "count(*)" : "coalesce(sum(" + Pasted(d.rows.sum) + "), 0)";
    std::string where = d.rows.where.empty() ? "" : Pasted(d.rows.where) + "\n    AND ";
    std::string groups = "(SELECT " + Cols("r", d.rows.columns) + ", " + amount +
                         " AS seatwatch_count\n    FROM " + From(d.rows.table, "r") +
                         "\n    WHERE " + where + NotNull("r", d.rows.columns) +
                         filter.On("r", d.key) + "\n    GROUP BY " + Cols("r", d.rows.columns) +
                         (d.limit_rows ? "" : "\n    HAVING " + amount + " > " + Number(*d.limit)) +
                         ") AS g";
    if (!d.limit_rows) return "FROM " + groups + (detail ? "\nWHERE true" : "");
    auto positions = KeyWithin(d, d.rows.columns, "rows.columns");
    return "FROM " + groups + "\nJOIN " + From(d.limit_rows->table, "l") + " ON " +
           Equal("l", d.limit_rows->columns, "g", d.rows.columns) + "\nWHERE g.seatwatch_count > " +
           Col("l", d.limit_rows->column) + filter.On("l", At(d.limit_rows->columns, positions));
  }
};

}  // namespace

const KindSql& AtMostKind() {
  static const AtMostSql kind;
  return kind;
}

}  // namespace seatwatch::declare
