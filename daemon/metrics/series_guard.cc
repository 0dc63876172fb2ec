#include "metrics/series_guard.h"

#include <functional>
#include <string_view>

#include "db/failure.h"
#include "metrics/exposition_escape.h"
#include "util/utf8.h"

namespace seatwatch::metrics {

namespace {

// NULL is exported as the empty string, so for a series the two are one.
std::string_view Text(const db::Rows::Cell& cell) {
  return cell ? std::string_view(*cell) : std::string_view();
}

// The columns that make a series: the labels, and the invariant if any.
template <typename Visit>
void ForEachKeyColumn(const ColumnBinding& binding, Visit visit) {
  if (binding.invariant_index >= 0) visit(static_cast<size_t>(binding.invariant_index));
  for (int index : binding.label_indexes) visit(static_cast<size_t>(index));
}

}  // namespace

size_t DuplicateSeriesGuard::Hash::operator()(size_t row) const {
  size_t hash = 0;
  ForEachKeyColumn(*binding, [&](size_t column) {
    size_t h = std::hash<std::string_view>()(Text(rows->values[row][column]));
    hash ^= h + 0x9e3779b97f4a7c15ULL + (hash << 6) + (hash >> 2);
  });
  return hash;
}

bool DuplicateSeriesGuard::Equal::operator()(size_t a, size_t b) const {
  bool equal = true;
  ForEachKeyColumn(*binding, [&](size_t column) {
    equal = equal && Text(rows->values[a][column]) == Text(rows->values[b][column]);
  });
  return equal;
}

DuplicateSeriesGuard::DuplicateSeriesGuard(std::string family, const db::Rows& rows,
                                           const ColumnBinding& binding, std::string invariant)
    : family_(std::move(family)),
      invariant_(std::move(invariant)),
      rows_(rows),
      binding_(binding),
      seen_(16, Hash{&rows, &binding}, Equal{&rows, &binding}) {}

void DuplicateSeriesGuard::Add(size_t row) {
  if (seen_.insert(row).second) return;
  // The series as it would be exported, each value cut short: the message
  // goes to the log and the API.
  std::string series = family_ + "{";
  bool first = true;
  auto label = [&](const std::string& name, std::string_view value) {
    if (!first) series += ",";
    first = false;
    series += name + "=\"";
    AppendEscapedLabelValue(series, value.substr(0, util::Utf8Prefix(value, 64)));
    series += "\"";
  };
  const auto& cells = rows_.values[row];
  if (binding_.invariant_index >= 0) {
    label("invariant", Text(cells[static_cast<size_t>(binding_.invariant_index)]));
  } else if (!invariant_.empty()) {
    label("invariant", invariant_);
  }
  for (size_t i = 0; i < binding_.label_indexes.size(); ++i) {
    label(binding_.label_names[i], Text(cells[static_cast<size_t>(binding_.label_indexes[i])]));
  }
  series += "}";
  throw db::DataError(db::FailureReason::kDuplicateSeries,
                      "two rows give the same series " + series +
                          " (NULL and '' labels are both exported as \"\"); Prometheus would "
                          "drop one of them");
}

}  // namespace seatwatch::metrics
