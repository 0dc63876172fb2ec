#include "page/check_facts.h"

namespace seatwatch::page {

CheckFacts FactsOf(const checks::CheckOutput& output) { return {output.lock_poll, output.holds}; }

}  // namespace seatwatch::page
