#pragma once

#include <string>
#include <vector>

#include "declare/declaration.h"

namespace seatwatch::declare {

// One count of a declared metric: the rows of one table, per key, counted
// (or their `sum` added up), those passing `where`.
struct Tally {
  std::string name;  // the label value that tells this count from the others
  // table; columns: the key's columns in that table (default: the metric's
  // key); where, sum, expires as for an invariant's rows.
  RowSet rows;
};

// One [[metric]] entry with kind = "count": per key, one sample per tally,
// 0 where the key has no such rows, for every key the tallied tables hold
// (a key with no rows in any of them has no samples; a NULL key is
// skipped). Riding on a check (`check` names one with invariants), its
// tables are counted in the scans that check's pass makes anyway.
struct MetricDeclaration {
  std::string name;                 // the metric: seatwatch_<name>
  std::vector<std::string> key;     // default key columns of every tally's table
  std::vector<std::string> labels;  // the key's label names (default: the key)
  std::string label;                // the label whose value names the tally
  std::vector<Tally> tallies;
};

// The kinds a [[metric]] entry takes.
std::vector<std::string> MetricKindNames();

// Throws DeclarationError ("tallies", "label", "tallies.columns") for what
// parsing cannot see alone: no tallies, two with one name, a tally whose
// key columns are not one per key column, the label among the key's.
void ValidateMetric(const MetricDeclaration& metric);

}  // namespace seatwatch::declare
