#include "checks/mismatch_report.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "checks/query_entry.h"
#include "metrics/row_mapping.h"

namespace seatwatch::checks {

namespace {

constexpr std::size_t kMaxText = 400;

std::string Capped(std::string text) {
  if (text.size() > kMaxText) text = text.substr(0, kMaxText) + "...";
  return text.empty() ? "none" : text;
}

std::string Number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

// Sorted: a key's rows come in no particular order.
std::string ViolationsText(const std::vector<metrics::Violation>& violations) {
  std::vector<std::string> parts;
  for (const auto& violation : violations) {
    std::string part;
    for (const auto& label : violation.labels) part += label.name + "=" + label.value + " ";
    parts.push_back(part + Number(violation.value));
  }
  std::sort(parts.begin(), parts.end());
  std::string text;
  for (const auto& part : parts) text += (text.empty() ? "" : "; ") + part;
  return Capped(std::move(text));
}

std::string RowsText(const std::vector<std::string>& columns,
                     std::vector<std::vector<db::Rows::Cell>> rows) {
  std::sort(rows.begin(), rows.end());
  std::string text;
  for (const auto& row : rows) {
    if (!text.empty()) text += "; ";
    for (std::size_t i = 0; i < row.size() && i < columns.size(); ++i) {
      if (i) text += " ";
      text += columns[i] + "=" + (row[i] ? *row[i] : std::string("NULL"));
    }
  }
  return Capped(std::move(text));
}

db::Rows AsRows(const KeyDifference& difference, bool full) {
  db::Rows rows;
  rows.columns = difference.columns;
  rows.values = full ? difference.full : difference.incremental;
  return rows;
}

}  // namespace

std::map<std::string, MismatchValues> JudgeDifference(const KeyDifference& difference,
                                                      const config::QueryConfig& entry) {
  std::map<std::string, MismatchValues> out;
  if (entry.invariants.empty()) {
    out[""] = MismatchValues{RowsText(difference.columns, difference.incremental),
                             RowsText(difference.columns, difference.full)};
    return out;
  }
  db::Rows before = AsRows(difference, false);
  db::Rows after = AsRows(difference, true);
  auto binding = BindEntryColumns(before, entry);
  auto incremental = metrics::RowsToViolations(before, binding, entry.invariants);
  auto full = metrics::RowsToViolations(after, binding, entry.invariants);
  for (const auto& name : entry.invariants) {
    std::string a = ViolationsText(incremental[name]);
    std::string b = ViolationsText(full[name]);
    if (a != b) out[name] = MismatchValues{a, b};
  }
  return out;
}

}  // namespace seatwatch::checks
