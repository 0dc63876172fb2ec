#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <prometheus/metric_family.h>

#include "changes/change_batch.h"

namespace seatwatch::changes {

// Every resync reason, in the order the metrics list them.
inline constexpr std::array<ResyncReason, 6> kAllResyncReasons = {
    ResyncReason::kStartup,    ResyncReason::kSlotLost,  ResyncReason::kError,
    ResyncReason::kUnmappable, ResyncReason::kDrainCost, ResyncReason::kCoverage};

// startup, slot_lost, error, unmappable, drain_cost, coverage.
const char* ResyncLabel(ResyncReason reason);

// What the change feed knows about itself after its last drain. A plain
// value: the feed copies it under its lock for a render.
struct FeedStats {
  bool up = false;
  std::int64_t lag_bytes = 0;
  std::uint64_t decoded_total = 0;
  double drain_duration_seconds = 0;
  // Slots the feed gave up that were still there after it ended their
  // sessions, and inactive slots of its prefix it could not drop.
  std::uint64_t orphan_slots = 0;
  std::array<std::uint64_t, kAllResyncReasons.size()> resyncs{};  // by kAllResyncReasons order

  void CountResync(ResyncReason reason) { ++resyncs[static_cast<size_t>(reason)]; }
  std::uint64_t resyncs_of(ResyncReason reason) const {
    return resyncs[static_cast<size_t>(reason)];
  }
};

// The seatwatch_changes_* families; every resync reason from 0.
std::vector<prometheus::MetricFamily> ChangesFamilies(const FeedStats& stats);
// The same in the text exposition format (HELP and TYPE lines included).
std::string RenderChangesMetrics(const FeedStats& stats);

}  // namespace seatwatch::changes
