#include "checks/detail_limits.h"

#include "util/utf8.h"

namespace seatwatch::checks {

namespace {

// True if it cut `text`.
bool Cut(std::string& text, size_t max_bytes) {
  if (text.size() <= max_bytes) return false;
  size_t original = text.size();
  text.resize(util::Utf8Prefix(text, max_bytes));
  text += "...[truncated, " + std::to_string(original) + " bytes]";
  return true;
}

}  // namespace

void ApplyDetailLimits(metrics::DetailRows& detail, const DetailLimits& limits) {
  size_t total = 0;
  for (auto& column : detail.columns) {
    if (Cut(column, limits.max_value_bytes)) detail.truncated = true;
    total += column.size();
  }
  if (Cut(detail.error, limits.max_value_bytes)) detail.truncated = true;
  size_t kept = 0;
  for (; kept < detail.rows.size(); ++kept) {
    size_t row_bytes = 0;
    for (auto& cell : detail.rows[kept]) {
      if (!cell) continue;
      if (Cut(*cell, limits.max_value_bytes)) detail.truncated = true;
      row_bytes += cell->size();
    }
    if (total + row_bytes > limits.max_total_bytes) break;
    total += row_bytes;
  }
  if (kept < detail.rows.size()) {
    detail.rows.resize(kept);
    detail.truncated = true;
  }
}

}  // namespace seatwatch::checks
