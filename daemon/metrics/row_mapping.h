#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "db/rows.h"
#include "metrics/check_output.h"

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
  std::string value_name;
  int value_index = -1;
  int invariant_index = -1;
};

// Throws MissingColumn naming the first absent column.
ColumnBinding BindColumns(const db::Rows& rows, const std::vector<std::string>& labels,
                          const std::string& value, const std::string& invariant_column);

// Numeric text as PostgreSQL writes it to double, strictly: an integer,
// numeric or float ("42", "-1.5", "123.4500", "1e+20"), "NaN", "Infinity",
// "-Infinity", or a boolean ("t"/"f", or "true"/"false" as boolean::text).
// Throws std::invalid_argument for anything else (blanks, hex, "inf", ""
// ...) and for a value a double cannot hold ("1e-400", "1e400"), which
// strtod alone would turn into 0 or infinity.
double ParseNumber(const std::string& text);

// ParseNumber for a cell of the binding's value column; throws
// db::DataError (bad_value) naming the column.
double ParseValue(const std::string& text, const ColumnBinding& binding);

// Rows grouped by invariant. With no invariant column every row belongs to
// `invariants[0]`. A row naming an invariant not in the list throws: the
// list bounds the series this entry may create. Rows with a NULL value or a
// NULL invariant are skipped; every listed invariant gets an entry. Throws
// db::DataError: bad_value for a value that is not a count of offending
// rows (not a number, NaN, negative, infinite), duplicate_series for two
// rows of one invariant with the same labels (NULL and '' are both empty).
std::map<std::string, std::vector<Violation>> RowsToViolations(
    const db::Rows& rows, const ColumnBinding& binding, const std::vector<std::string>& invariants);

}  // namespace seatwatch::metrics
