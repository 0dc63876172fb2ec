#pragma once

#include <string>
#include <vector>

#include <prometheus/metric_family.h>

#include "metrics/poll_state.h"
#include "metrics/snapshot.h"

namespace seatwatch::metrics {

// Turns the poller's state into the published snapshot: the metric families
// of every check (only those whose last run succeeded), seatwatch's own
// series, and the JSON documents. Pure.
Snapshot BuildSnapshot(const PollState& state);

// The families alone, before rendering; exposed for tests.
std::vector<prometheus::MetricFamily> BuildFamilies(const PollState& state);

std::string RenderText(const std::vector<prometheus::MetricFamily>& families);

std::string InvariantsJson(const PollState& state);

}  // namespace seatwatch::metrics
