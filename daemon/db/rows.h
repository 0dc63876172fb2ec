#pragma once

#include <optional>
#include <string>
#include <vector>

namespace pqxx {
class result;
}

namespace seatwatch::db {

// A query result as plain values, so that everything after the fetch is pure
// code that unit tests can feed by hand. NULL is std::nullopt.
struct Rows {
  using Cell = std::optional<std::string>;
  std::vector<std::string> columns;
  std::vector<std::vector<Cell>> values;

  // Index of a column by name, or -1.
  int ColumnIndex(const std::string& name) const;
};

Rows ToRows(const pqxx::result& result);

}  // namespace seatwatch::db
