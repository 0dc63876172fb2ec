#include "metrics/row_mapping.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "db/failure.h"
#include "metrics/series_guard.h"
#include "util/join.h"
#include "util/utf8.h"

namespace seatwatch::metrics {

namespace {

std::vector<Label> LabelsOf(const std::vector<db::Rows::Cell>& row,
                                    const ColumnBinding& binding) {
  std::vector<Label> labels;
  labels.reserve(binding.label_indexes.size());
  for (size_t i = 0; i < binding.label_indexes.size(); ++i) {
    const auto& cell = row[binding.label_indexes[i]];
    labels.push_back({binding.label_names[i], cell.value_or("")});
  }
  return labels;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// -?D+(.D+)?([eE][+-]?D+)? : every finite value PostgreSQL's integer,
// numeric and float output can be, and nothing strtod would also take
// (blanks, hex, "inf", "nan", a lone point).
bool IsDecimal(const std::string& text) {
  size_t i = 0;
  auto digits = [&] {
    size_t start = i;
    while (i < text.size() && IsDigit(text[i])) ++i;
    return i > start;
  };
  if (i < text.size() && text[i] == '-') ++i;
  if (!digits()) return false;
  if (i < text.size() && text[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == text.size();
}

// The value as it may be quoted in a message: short, and valid UTF-8.
std::string Quoted(const std::string& text) {
  size_t keep = util::Utf8Prefix(text, 40);
  return "\"" + util::ValidUtf8(text.substr(0, keep)) + (keep < text.size() ? "...\"" : "\"");
}

}  // namespace

MissingColumn::MissingColumn(std::string key, std::string column,
                             const std::vector<std::string>& returned)
    : std::runtime_error("column \"" + column + "\" is not in the query's result (it returns: " +
                         util::Join(returned, ", ") + ")"),
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
  binding.value_name = value;
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
  // A boolean column is written "t"/"f"; boolean::text gives "true"/"false".
  if (text == "t" || text == "true") return 1;
  if (text == "f" || text == "false") return 0;
  if (text == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (text == "Infinity") return std::numeric_limits<double>::infinity();
  if (text == "-Infinity") return -std::numeric_limits<double>::infinity();
  if (text.empty()) throw std::invalid_argument("empty value where a number was expected");
  if (!IsDecimal(text)) throw std::invalid_argument("value " + Quoted(text) + " is not a number");
  errno = 0;
  double value = std::strtod(text.c_str(), nullptr);
  // ERANGE with 0 or infinity: beyond what a double holds (1e-400, 1e400, a
  // numeric of 400 digits). A subnormal result is still the value, if
  // less precise, and is kept.
  if (errno == ERANGE && (value == 0 || std::isinf(value))) {
    throw std::invalid_argument("value " + Quoted(text) + " is out of the range of a double");
  }
  return value;
}

double ParseValue(const std::string& text, const ColumnBinding& binding) {
  try {
    return ParseNumber(text);
  } catch (const std::invalid_argument& e) {
    throw db::DataError(db::FailureReason::kBadValue,
                        "column \"" + binding.value_name + "\": " + e.what());
  }
}

std::map<std::string, std::vector<Violation>> RowsToViolations(
    const db::Rows& rows, const ColumnBinding& binding,
    const std::vector<std::string>& invariants) {
  std::map<std::string, std::vector<Violation>> out;
  for (const auto& name : invariants) out[name];
  DuplicateSeriesGuard guard("seatwatch_invariant_violations", rows, binding,
                             binding.invariant_index >= 0 ? "" : invariants.front());
  for (size_t r = 0; r < rows.values.size(); ++r) {
    const auto& row = rows.values[r];
    const auto& cell = row[binding.value_index];
    if (!cell) continue;
    std::string invariant = invariants.front();
    if (binding.invariant_index >= 0) {
      const auto& name = row[binding.invariant_index];
      if (!name) continue;
      if (std::find(invariants.begin(), invariants.end(), *name) == invariants.end()) {
        throw std::runtime_error("the query names invariant " + Quoted(*name) +
                                 ", which is not in this entry's invariants list");
      }
      invariant = *name;
    }
    double value = ParseValue(*cell, binding);
    // A count of offending rows. NaN would read as violated (NaN != 0), a
    // negative count would cancel real ones out of the total: either is a
    // broken query, and its verdict is unknown, not "ok" or "violated".
    if (!(value >= 0) || std::isinf(value)) {
      throw db::DataError(db::FailureReason::kBadValue,
                          "invariant \"" + invariant + "\": column \"" + binding.value_name +
                              "\" is " + Quoted(*cell) +
                              ", not a count of offending rows (a finite number >= 0)");
    }
    guard.Add(r);
    out[invariant].push_back({LabelsOf(row, binding), value, nullptr});
  }
  return out;
}

}  // namespace seatwatch::metrics
