#include "db/rows.h"

#include <pqxx/result>

namespace seatwatch::db {

int Rows::ColumnIndex(const std::string& name) const {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i] == name) return static_cast<int>(i);
  }
  return -1;
}

Rows ToRows(const pqxx::result& result) {
  Rows rows;
  const auto width = result.columns();
  for (pqxx::row::size_type c = 0; c < width; ++c) rows.columns.emplace_back(result.column_name(c));
  rows.values.reserve(result.size());
  for (const auto& row : result) {
    std::vector<Rows::Cell> cells;
    cells.reserve(width);
    for (const auto& field : row) {
      if (field.is_null()) {
        cells.emplace_back(std::nullopt);
      } else {
        cells.emplace_back(std::string(field.c_str(), field.size()));
      }
    }
    rows.values.push_back(std::move(cells));
  }
  return rows;
}

}  // namespace seatwatch::db
