#pragma once

#include <string>

#include "metrics/poll_state.h"

namespace seatwatch::testing {

// The status of the check named `name` in a poll's state; throws if the
// poll has no such check.
const metrics::CheckStatus& FindCheck(const metrics::PollState& state, const std::string& name);

}  // namespace seatwatch::testing
