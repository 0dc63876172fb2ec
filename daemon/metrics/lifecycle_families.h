#pragma once

#include <string>
#include <vector>

#include <prometheus/metric_family.h>

#include "metrics/poll_state.h"
#include "metrics/violation_lifecycle.h"

namespace seatwatch::metrics {

// Where a violated key's lifecycle becomes series: since when each key
// violated now is, how many keys turned violated and healed per invariant,
// and how long the healed ones lasted.
void AddLifecycleFamilies(const PollState& state, std::vector<prometheus::MetricFamily>& out);

// The open violation of `labels` in any lane's lifecycle, or nullptr.
const OpenViolation* FindOpen(const PollState& state, const std::string& check,
                              const std::string& invariant, const Labels& labels);
// Every lane's recently healed keys, newest first, at most
// ViolationLifecycle::kMaxHealed.
std::vector<HealedViolation> RecentlyHealed(const PollState& state);
// When this process began to follow lifecycles (the earliest lane's start);
// 0 before any lane published one.
double LifecycleStart(const PollState& state);

}  // namespace seatwatch::metrics
