// unique: rows beyond the first for each distinct `columns`. A row with a
// NULL among them is never a duplicate, as in a UNIQUE constraint.
#include <algorithm>

#include "declare/kind_sql.h"

namespace seatwatch::declare {

namespace {

class UniqueSql final : public KindSql {
 public:
  std::vector<std::string> Fields() const override { return {"rows"}; }

  void Validate(const Declaration& d) const override {
    RequireColumns(d.rows, "rows", true);
    RefuseFields(d.rows, "rows", {"sum", "column"}, "unique");
    KeyWithin(d, d.rows.columns, "rows.columns");
  }

  // Per key, its rows less its distinct values: the same number as the
  // groups' rows beyond their first, counted by a small sort within each
  // key instead of a hash of every row's columns (which outgrows work_mem
  // and spills at a million rows).
  std::string Violations(const Declaration& d, const KeyFilter& filter) const override {
    std::vector<std::string> rest;
    for (const auto& column : d.rows.columns) {
      if (std::find(d.key.begin(), d.key.end(), column) == d.key.end()) rest.push_back(column);
    }
    std::string distinct = rest.empty()      ? "1"
                           : rest.size() == 1 ? "count(DISTINCT " + Col("r", rest[0]) + ")"
                                              : "count(DISTINCT (" + Cols("r", rest) + "))";
    std::string where = d.rows.where.empty() ? "" : Pasted(d.rows.where) + "\n  AND ";
    return "SELECT " + KeyAsLabels("r", d.key, d.labels) + ", count(*) - " + distinct +
           " AS seatwatch_violations\nFROM " + From(d.rows.table, "r") + "\nWHERE " + where +
           NotNull("r", d.rows.columns) + filter.On("r", d.key) + "\nGROUP BY " +
           Cols("r", d.key) + "\nHAVING count(*) > " + distinct;
  }

  std::string Detail(const Declaration& d, const KeyFilter& filter) const override {
    std::vector<std::string> order = d.key;
    for (const auto& column : d.rows.columns) order.push_back(column);
    std::string where = d.rows.where.empty() ? "" : "\nWHERE " + Pasted(d.rows.where);
    return "SELECT r.*, d.seatwatch_rows\nFROM " + From(d.rows.table, "r") + "\nJOIN (" +
           Groups(d, filter) + ") AS d ON " + Equal("r", d.rows.columns, "d", d.rows.columns) +
           where + OrderBy("r", order);
  }

  std::vector<KeyedTable> Tables(const Declaration& d) const override {
    return {{d.rows.table, d.key}};
  }

  std::optional<BalanceSide> DistinctOf(const Declaration& d) const override {
    BalanceSide side{d.rows.table, d.key, {}, d.rows.where};
    for (const auto& column : d.rows.columns) {
      if (std::find(d.key.begin(), d.key.end(), column) == d.key.end()) {
        side.columns.push_back(column);
      }
    }
    return side;
  }

 private:
  // Each group of equal `columns` with more than one row.
  static std::string Groups(const Declaration& d, const KeyFilter& filter) {
    std::string where = d.rows.where.empty() ? "" : Pasted(d.rows.where) + "\n  AND ";
    return "SELECT " + Cols("r", d.rows.columns) + ", count(*) AS seatwatch_rows\n  FROM " +
           From(d.rows.table, "r") + "\n  WHERE " + where + NotNull("r", d.rows.columns) +
           filter.On("r", d.key) + "\n  GROUP BY " + Cols("r", d.rows.columns) +
           "\n  HAVING count(*) > 1";
  }
};

}  // namespace

const KindSql& UniqueKind() {
  static const UniqueSql kind;
  return kind;
}

}  // namespace seatwatch::declare
