// The change feed's own series, rendered from its stats. No database.
#include "changes/changes_metrics.h"

#include <gtest/gtest.h>

namespace seatwatch::changes {
namespace {

bool Has(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos || text.rfind(line + "\n", 0) == 0;
}

TEST(ChangesMetricsTest, EveryFamilyAndReasonFromZero) {
  std::string text = RenderChangesMetrics(FeedStats{});
  EXPECT_TRUE(Has(text, "# TYPE seatwatch_changes_up gauge")) << text;
  EXPECT_TRUE(Has(text, "seatwatch_changes_up 0")) << text;
  EXPECT_TRUE(Has(text, "# TYPE seatwatch_changes_lag_bytes gauge")) << text;
  EXPECT_TRUE(Has(text, "seatwatch_changes_lag_bytes 0")) << text;
  EXPECT_TRUE(Has(text, "# TYPE seatwatch_changes_decoded_total counter")) << text;
  EXPECT_TRUE(Has(text, "seatwatch_changes_decoded_total 0")) << text;
  EXPECT_TRUE(Has(text, "# TYPE seatwatch_changes_drain_duration_seconds gauge")) << text;
  EXPECT_TRUE(Has(text, "seatwatch_changes_drain_duration_seconds 0")) << text;
  EXPECT_TRUE(Has(text, "# TYPE seatwatch_changes_resyncs_total counter")) << text;
  for (const char* reason :
       {"startup", "slot_lost", "error", "unmappable", "drain_cost", "coverage"}) {
    EXPECT_TRUE(Has(text, std::string("seatwatch_changes_resyncs_total{reason=\"") + reason +
                              "\"} 0"))
        << reason << "\n" << text;
  }
  EXPECT_TRUE(Has(text, "# TYPE seatwatch_changes_orphan_slots gauge")) << text;
  EXPECT_TRUE(Has(text, "seatwatch_changes_orphan_slots 0")) << text;
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
  EXPECT_TRUE(Has(text, "seatwatch_changes_up 1")) << text;
  EXPECT_TRUE(Has(text, "seatwatch_changes_lag_bytes 123456")) << text;
  EXPECT_TRUE(Has(text, "seatwatch_changes_decoded_total 2500")) << text;
  EXPECT_TRUE(Has(text, "seatwatch_changes_drain_duration_seconds 0.25")) << text;
  EXPECT_TRUE(Has(text, "seatwatch_changes_resyncs_total{reason=\"startup\"} 1")) << text;
  EXPECT_TRUE(Has(text, "seatwatch_changes_resyncs_total{reason=\"slot_lost\"} 2")) << text;
  EXPECT_TRUE(Has(text, "seatwatch_changes_resyncs_total{reason=\"error\"} 0")) << text;
  EXPECT_TRUE(Has(text, "seatwatch_changes_resyncs_total{reason=\"unmappable\"} 0")) << text;
  EXPECT_TRUE(Has(text, "seatwatch_changes_resyncs_total{reason=\"drain_cost\"} 1")) << text;
  EXPECT_TRUE(Has(text, "seatwatch_changes_resyncs_total{reason=\"coverage\"} 1")) << text;
  EXPECT_TRUE(Has(text, "seatwatch_changes_orphan_slots 2")) << text;
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
