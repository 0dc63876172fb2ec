// The change feed's own series, rendered from its stats. No database.
#include "changes/changes_metrics.h"

#include <gtest/gtest.h>

#include "unit/text_expectations.h"

namespace seatwatch::changes {
namespace {

using seatwatch::testing::ExpectLines;
using seatwatch::testing::HasLine;

TEST(ChangesMetricsTest, EveryFamilyAndReasonFromZero) {
  std::string text = RenderChangesMetrics(FeedStats{});
  ExpectLines(text, {"# TYPE seatwatch_changes_up gauge", "seatwatch_changes_up 0",
                     "# TYPE seatwatch_changes_lag_bytes gauge", "seatwatch_changes_lag_bytes 0",
                     "# TYPE seatwatch_changes_decoded_total counter",
                     "seatwatch_changes_decoded_total 0",
                     "# TYPE seatwatch_changes_drain_duration_seconds gauge",
                     "seatwatch_changes_drain_duration_seconds 0",
                     "# TYPE seatwatch_changes_resyncs_total counter"});
  for (const char* reason :
       {"startup", "slot_lost", "error", "unmappable", "drain_cost", "coverage"}) {
    EXPECT_TRUE(HasLine(text, std::string("seatwatch_changes_resyncs_total{reason=\"") + reason +
                                  "\"} 0"))
        << reason << "\n" << text;
  }
  ExpectLines(text, {"# TYPE seatwatch_changes_orphan_slots gauge",
                     "seatwatch_changes_orphan_slots 0"});
  EXPECT_TRUE(text.find("# HELP seatwatch_changes_up ") != std::string::npos) << text;
}

TEST(ChangesMetricsTest, ValuesOfTheLastDrain) {
  FeedStats stats;
  stats.up = true;
  stats.lag_bytes = 123456;
  stats.decoded_total = 2500;
  stats.drain_duration_seconds = 0.25;
  stats.CountResync(ResyncReason::kStartup);
  stats.CountResync(ResyncReason::kSlotLost);
  stats.CountResync(ResyncReason::kSlotLost);
  stats.CountResync(ResyncReason::kDrainCost);
  stats.CountResync(ResyncReason::kCoverage);
  stats.orphan_slots = 2;
  std::string text = RenderChangesMetrics(stats);
  ExpectLines(text, {"seatwatch_changes_up 1", "seatwatch_changes_lag_bytes 123456",
                     "seatwatch_changes_decoded_total 2500",
                     "seatwatch_changes_drain_duration_seconds 0.25",
                     "seatwatch_changes_resyncs_total{reason=\"startup\"} 1",
                     "seatwatch_changes_resyncs_total{reason=\"slot_lost\"} 2",
                     "seatwatch_changes_resyncs_total{reason=\"error\"} 0",
                     "seatwatch_changes_resyncs_total{reason=\"unmappable\"} 0",
                     "seatwatch_changes_resyncs_total{reason=\"drain_cost\"} 1",
                     "seatwatch_changes_resyncs_total{reason=\"coverage\"} 1",
                     "seatwatch_changes_orphan_slots 2"});
}

TEST(ChangesMetricsTest, ReasonLabels) {
  EXPECT_STREQ(ResyncLabel(ResyncReason::kStartup), "startup");
  EXPECT_STREQ(ResyncLabel(ResyncReason::kSlotLost), "slot_lost");
  EXPECT_STREQ(ResyncLabel(ResyncReason::kError), "error");
  EXPECT_STREQ(ResyncLabel(ResyncReason::kUnmappable), "unmappable");
  EXPECT_STREQ(ResyncLabel(ResyncReason::kDrainCost), "drain_cost");
  EXPECT_STREQ(ResyncLabel(ResyncReason::kCoverage), "coverage");
}

}  // namespace
}  // namespace seatwatch::changes
