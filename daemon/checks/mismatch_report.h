#pragma once

#include <map>
#include <string>

#include "checks/backstop_audit.h"
#include "config/config.h"

namespace seatwatch::checks {

// What one invariant (or a [[metric]] entry, as "") said of a key in the
// incremental state and in the backstop full pass, as text for the log
// ("event_id=7 1", "none").
struct MismatchValues {
  std::string incremental;
  std::string full;
};

// The invariants of `entry` whose verdict on the key differs between the two
// sides of `difference`. An invariant entry is judged by its violations (a
// difference in other columns of its rows is not a mismatch); a [[metric]]
// entry, which has no invariants, by its rows whole, under "". Throws
// whatever binding the entry's columns throws.
std::map<std::string, MismatchValues> JudgeDifference(const KeyDifference& difference,
                                                      const config::QueryConfig& entry);

}  // namespace seatwatch::checks
