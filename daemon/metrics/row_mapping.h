#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "checks/check_output.h"
#include "db/rows.h"

namespace seatwatch::metrics {

// A label or value column the query did not return. `key` is the config key
// that named it, so the caller can point at file and line.
class MissingColumn : public std::runtime_error {
 public:
  MissingColumn(std::string key, std::string column, const std::vector<std::string>& returned);
  const std::string& key() const { return key_; }

 private:
  std::string key_;
};

// Column names resolved to indexes once per result.
struct ColumnBinding {
  std::vector<std::string> label_names;
  std::vector<int> label_indexes;
  int value_index = -1;
  int invariant_index = -1;
};

// Throws MissingColumn naming the first absent column.
ColumnBinding BindColumns(const db::Rows& rows, const std::vector<std::string>& labels,
                          const std::string& value, const std::string& invariant_column);

// Numeric text from PostgreSQL ("42", "1.5", "NaN", "Infinity", "t"/"f") to
// double. Throws std::invalid_argument for anything else.
double ParseNumber(const std::string& text);

// Rows grouped by invariant. With no invariant column every row belongs to
// `invariants[0]`. A row naming an invariant not in the list throws: the
// list bounds the series this entry may create. Rows with a NULL value or a
// NULL invariant are skipped; every listed invariant gets an entry.
std::map<std::string, std::vector<checks::Violation>> RowsToViolations(
    const db::Rows& rows, const ColumnBinding& binding, const std::vector<std::string>& invariants);

}  // namespace seatwatch::metrics
