#include "support/check_status.h"

#include <stdexcept>

namespace seatwatch::testing {

const metrics::CheckStatus& FindCheck(const metrics::PollState& state, const std::string& name) {
  for (const auto& check : state.checks) {
    if (check.name == name) return check;
  }
  throw std::runtime_error("no check " + name);
}

}  // namespace seatwatch::testing
