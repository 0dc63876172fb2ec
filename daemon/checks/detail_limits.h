#pragma once

#include <cstddef>

#include "metrics/check_output.h"

namespace seatwatch::checks {

// A detail query is the user's SQL over the offending rows: a text column
// of a megabyte, or twenty of them, would be kept in memory and served in
// every /api/invariants response and --once report until the violation
// changes. These bound what one invariant's detail may hold.
struct DetailLimits {
  size_t max_value_bytes = 1024;       // per value; longer ones are cut
  size_t max_total_bytes = 64 * 1024;  // column names and values of all rows kept
};

// Cuts each value (and column name) longer than max_value_bytes on a
// character boundary and marks it "...[truncated, N bytes]"; then keeps
// rows only while the total stays within max_total_bytes. Sets
// detail.truncated if anything was cut or dropped. Error texts are cut too.
void ApplyDetailLimits(metrics::DetailRows& detail, const DetailLimits& limits = {});

}  // namespace seatwatch::checks
