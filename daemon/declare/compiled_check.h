#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "declare/declaration.h"
#include "declare/metric_declaration.h"
#include "declare/row_terms.h"

namespace seatwatch::declare {

// The result columns every compiled check returns beside its labels.
inline constexpr const char* kInvariantColumn = "seatwatch_invariant";
inline constexpr const char* kViolationsColumn = "seatwatch_violations";
inline constexpr const char* kExpiryColumn = "seatwatch_next_expiry";

// A declared metric riding on a check's pass: its rows are those with
// `value_column` set; labels are the check's, then the tally label.
struct CompiledMetric {
  std::string name;
  std::vector<std::string> labels;
  std::string value_column;
};

// The declarations of one check compiled into the statements the daemon
// runs: one full pass for all of them, the same narrowed to dirty keys for
// incremental mode, a detail query per invariant, and the change feed's map.
struct CompiledCheck {
  std::string name;
  std::vector<std::string> invariants;
  std::vector<std::string> labels;
  std::string full_sql;
  // $1: the dirty keys. Empty when the check cannot be rechecked key by
  // key (why: not_incremental); it then runs full passes only.
  std::string scoped_sql;
  std::string not_incremental;
  std::map<std::string, std::string> detail_sql;  // invariant -> SQL, $n per label
  // Each table read -> its column holding the key (TableText names).
  std::map<std::string, std::string> tables;
  std::string expiry_column;  // kExpiryColumn when an entry names `expires`
  // Read from the same result: after seatwatch_next_expiry come each
  // metric's tally label (text) and value (float8) columns, NULL on the
  // rows of the invariants.
  std::vector<CompiledMetric> metrics;
  // With scoped_sql: what each row adds to the pass, for rechecks that
  // follow a hot key's rows instead of reading it whole; null when the
  // check cannot be kept so (not_row_wise says why).
  std::shared_ptr<const RowTerms> row_terms;
  std::string not_row_wise;
};

// `declarations` (of one check, each already validated by its kind) and the
// metrics riding on it (validated) into one CompiledCheck; either may be
// empty, not both. Throws DeclarationError when they cannot share a pass
// (different labels) or map a table to two different key columns.
CompiledCheck CompileCheck(const std::string& check, const std::vector<Declaration>& declarations,
                           const std::vector<MetricDeclaration>& metrics = {});

}  // namespace seatwatch::declare
