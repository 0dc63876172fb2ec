#include <algorithm>

#include "declare/kind_sql.h"

namespace seatwatch::declare {

void RequireColumns(const RowSet& set, const std::string& field, bool columns_needed) {
  if (set.table.name.empty()) throw DeclarationError(field + ".table", "is required");
  if (columns_needed && set.columns.empty()) {
    throw DeclarationError(field + ".columns", "is required: at least one column");
  }
}

void RefuseFields(const RowSet& set, const std::string& field,
                  const std::vector<std::string>& fields, const std::string& kind) {
  for (const auto& name : fields) {
    bool given = (name == "where" && !set.where.empty()) || (name == "sum" && !set.sum.empty()) ||
                 (name == "expires" && !set.expires.empty()) ||
                 (name == "column" && !set.column.empty()) ||
                 (name == "columns" && !set.columns.empty());
    if (given) {
      throw DeclarationError(field + "." + name, "is not taken here by kind " + kind);
    }
  }
}

std::vector<size_t> KeyWithin(const Declaration& declaration,
                              const std::vector<std::string>& columns, const std::string& field) {
  return Positions(declaration.key, columns, "key",
                   field + " (the key must be among them, so that each row belongs to one key)");
}

std::string OrderBy(const std::string& alias, const std::vector<std::string>& columns) {
  std::vector<std::string> unique;
  for (const auto& column : columns) {
    if (std::find(unique.begin(), unique.end(), column) == unique.end()) unique.push_back(column);
  }
  return "\nORDER BY " + Cols(alias, unique);
}

}  // namespace seatwatch::declare
