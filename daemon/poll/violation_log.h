#pragma once

#include <cstdint>

#include "metrics/violation_lifecycle.h"

namespace seatwatch::poll {

// The log line of a key a run turned violated: check, invariant, key, and
// what the change feed knows of the commits that did it
// (first_violated_by="xid=… committed_at=… … changes=\"UPDATE seats(…)
// status held→sold\""), else why nothing is known.
void LogOpenedViolation(const metrics::OpenViolation& opened, bool incremental);
// Keys opened by one run beyond those logged one by one.
void LogMoreOpened(std::uint64_t more);

}  // namespace seatwatch::poll
