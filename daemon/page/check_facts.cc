#include "page/check_facts.h"

#include "checks/lock_check.h"

namespace seatwatch::page {

CheckFacts FactsOf(const metrics::CheckOutput& output) {
  CheckFacts facts;
  facts.lock_poll = checks::LockPollOf(output);
  if (const checks::HoldsCounts* holds = checks::HoldsOf(output)) facts.holds = *holds;
  return facts;
}

}  // namespace seatwatch::page
