#pragma once

#include <memory>
#include <vector>

#include "checks/check.h"
#include "config/config.h"

namespace seatwatch::checks {

// The explicit list of check kinds and when each is on. Adding a kind means
// one new file and one line here.
std::vector<std::unique_ptr<Check>> BuildChecks(const config::Config& config);

}  // namespace seatwatch::checks
