#pragma once

#include <memory>
#include <optional>

#include "checks/holds_check.h"
#include "locks/lock_poll.h"
#include "metrics/check_output.h"

namespace seatwatch::page {

// The facts of one check's output that the page renders itself: the locks
// check's poll and the holds check's counts (null/empty from other checks).
// The page reads them only through FactsOf. Pure; a plain value.
struct CheckFacts {
  std::shared_ptr<const locks::LockPoll> lock_poll;
  std::optional<checks::HoldsCounts> holds;
};

CheckFacts FactsOf(const metrics::CheckOutput& output);

}  // namespace seatwatch::page
