#pragma once

#include <memory>
#include <string>
#include <vector>

#include <prometheus/metric_family.h>

#include "metrics/family_text.h"
#include "metrics/poll_state.h"
#include "metrics/snapshot.h"

namespace seatwatch::metrics {

// Turns the poller's state into the published snapshot: the metric families
// of every check (only those whose last run succeeded), seatwatch's own
// series, and the JSON documents. Pure.
Snapshot BuildSnapshot(const PollState& state);
// The same, keeping `state` itself in Snapshot::state (no copy of it).
Snapshot BuildSnapshot(std::shared_ptr<const PollState> state);

// seatwatch's own families (up, checks, invariants), before rendering (see
// RenderText). The
// checks' own families are rendered when each check runs (CheckStatus::rendered).
std::vector<prometheus::MetricFamily> BuildFamilies(const PollState& state);

std::string InvariantsJson(const PollState& state);

}  // namespace seatwatch::metrics
