#pragma once

#include <cstddef>
#include <string>
#include <unordered_set>

#include "db/rows.h"
#include "metrics/row_mapping.h"

namespace seatwatch::metrics {

// Catches two rows of one family that would export the same label set: a
// NULL and a '' label are both exported empty, and Prometheus keeps one of
// two such samples and drops the other without a word. Keeps row indexes
// only (the rows stay in `rows`), and compares the label values themselves,
// so it costs a few bytes per row and never mistakes two series for one.
// With the binding's invariant column, rows of different invariants are
// different series. Not thread-safe; lives for one pass over `rows`.
class DuplicateSeriesGuard {
 public:
  // `invariant`, if set, is the invariant label every row of the family
  // carries (an entry without invariant column); only for the message.
  DuplicateSeriesGuard(std::string family, const db::Rows& rows, const ColumnBinding& binding,
                       std::string invariant = "");

  // Throws db::DataError (duplicate_series) naming the series if an earlier
  // row had the same label set.
  void Add(size_t row);

 private:
  struct Hash {
    const db::Rows* rows;
    const ColumnBinding* binding;
    size_t operator()(size_t row) const;
  };
  struct Equal {
    const db::Rows* rows;
    const ColumnBinding* binding;
    bool operator()(size_t a, size_t b) const;
  };

  std::string family_;
  std::string invariant_;
  const db::Rows& rows_;
  const ColumnBinding& binding_;
  std::unordered_set<size_t, Hash, Equal> seen_;
};

}  // namespace seatwatch::metrics
