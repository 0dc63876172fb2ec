// check: rows where `condition` is false. NULL passes, as in a CHECK
// constraint.
#include "declare/kind_sql.h"

namespace seatwatch::declare {

namespace {

class CheckSql final : public KindSql {
 public:
  std::vector<std::string> Fields() const override { return {"rows", "condition"}; }

  void Validate(const Declaration& d) const override {
    RequireColumns(d.rows, "rows", false);
    RefuseFields(d.rows, "rows", {"columns", "sum", "column"}, "check");
    if (d.condition.empty()) {
      throw DeclarationError("condition", "is required by kind check: what every row must satisfy");
    }
  }

  std::string Violations(const Declaration& d, const KeyFilter& filter) const override {
    return "SELECT " + KeyAsLabels("r", d.key, d.labels) +
           ", count(*) AS seatwatch_violations\n" + Failing(d, filter) + "\nGROUP BY " +
           Cols("r", d.key);
  }

  std::string Detail(const Declaration& d, const KeyFilter& filter) const override {
    return "SELECT r.*\n" + Failing(d, filter) + OrderBy("r", d.key);
  }

  std::vector<KeyedTable> Tables(const Declaration& d) const override {
    return {{d.rows.table, d.key}};
  }

 private:
  static std::string Failing(const Declaration& d, const KeyFilter& filter) {
    std::string where = d.rows.where.empty() ? "" : Pasted(d.rows.where) + "\n  AND ";
    return "FROM " + From(d.rows.table, "r") + "\nWHERE " + where + "NOT " +
           Pasted(d.condition) + filter.On("r", d.key);
  }
};

}  // namespace

const KindSql& CheckKind() {
  static const CheckSql kind;
  return kind;
}

}  // namespace seatwatch::declare
