#include "changes/drain_cost_policy.h"

namespace seatwatch::changes {

bool DrainCostPolicy::Dear(double drain_seconds) {
  bool dear = full_pass_seconds_ > 0 && drain_seconds > full_pass_seconds_ &&
              drain_seconds > kFloorSeconds;
  dear_in_a_row_ = dear ? dear_in_a_row_ + 1 : 0;
  if (dear_in_a_row_ < kConsecutive) return false;
  dear_in_a_row_ = 0;
  return true;
}

}  // namespace seatwatch::changes
