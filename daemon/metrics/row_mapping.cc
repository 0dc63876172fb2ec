#include "metrics/row_mapping.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace seatwatch::metrics {

namespace {

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

std::vector<checks::Label> LabelsOf(const std::vector<db::Rows::Cell>& row,
                                    const ColumnBinding& binding) {
  std::vector<checks::Label> labels;
  labels.reserve(binding.label_indexes.size());
  for (size_t i = 0; i < binding.label_indexes.size(); ++i) {
    const auto& cell = row[binding.label_indexes[i]];
    labels.push_back({binding.label_names[i], cell.value_or("")});
  }
  return labels;
}

}  // namespace

MissingColumn::MissingColumn(std::string key, std::string column,
                             const std::vector<std::string>& returned)
    : std::runtime_error("column \"" + column + "\" is not in the query's result (it returns: " +
                         Join(returned) + ")"),
      key_(std::move(key)) {}

ColumnBinding BindColumns(const db::Rows& rows, const std::vector<std::string>& labels,
                          const std::string& value, const std::string& invariant_column) {
  ColumnBinding binding;
  binding.label_names = labels;
  for (const auto& label : labels) {
    int index = rows.ColumnIndex(label);
    if (index < 0) throw MissingColumn("labels", label, rows.columns);
    binding.label_indexes.push_back(index);
  }
  binding.value_index = rows.ColumnIndex(value);
  if (binding.value_index < 0) throw MissingColumn("value", value, rows.columns);
  if (!invariant_column.empty()) {
    binding.invariant_index = rows.ColumnIndex(invariant_column);
    if (binding.invariant_index < 0) {
      throw MissingColumn("invariant_column", invariant_column, rows.columns);
    }
  }
  return binding;
}

double ParseNumber(const std::string& text) {
  if (text == "t" || text == "true") return 1;
  if (text == "f" || text == "false") return 0;
  if (text == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (text == "Infinity") return std::numeric_limits<double>::infinity();
  if (text == "-Infinity") return -std::numeric_limits<double>::infinity();
  if (text.empty()) throw std::invalid_argument("empty value where a number was expected");
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) {
    throw std::invalid_argument("value \"" + text + "\" is not a number");
  }
  return value;
}

std::map<std::string, std::vector<checks::Violation>> RowsToViolations(
    const db::Rows& rows, const ColumnBinding& binding, const std::vector<std::string>& invariants) {
  std::map<std::string, std::vector<checks::Violation>> out;
  for (const auto& name : invariants) out[name];
  for (const auto& row : rows.values) {
    const auto& cell = row[binding.value_index];
    if (!cell) continue;
    std::string invariant = invariants.front();
    if (binding.invariant_index >= 0) {
      const auto& name = row[binding.invariant_index];
      if (!name) continue;
      if (std::find(invariants.begin(), invariants.end(), *name) == invariants.end()) {
        throw std::runtime_error("the query names invariant \"" + *name +
                                 "\", which is not in this entry's invariants list");
      }
      invariant = *name;
    }
    out[invariant].push_back({LabelsOf(row, binding), ParseNumber(*cell)});
  }
  return out;
}

}  // namespace seatwatch::metrics
