#pragma once

#include <string>
#include <vector>

#include "metrics/check_output.h"

namespace seatwatch::checks {

// The parameters of a detail query: first one array per label of the entry
// ($1 for the first label, in the order of `labels`), holding that label's
// value in each violation row, distinct and sorted; then the entry's params.
// Only the first `used` are returned (the highest $N the query names), so a
// detail query that needs no filter takes none. The arrays let a detail
// query read only the offending keys (`WHERE event_id = ANY ($1::int[])`),
// an index lookup, instead of scanning every table again to find them.
std::vector<std::string> DetailParameters(const std::vector<std::string>& labels,
                                          const std::vector<metrics::Violation>& violations,
                                          const std::vector<std::string>& params, size_t used);

}  // namespace seatwatch::checks
