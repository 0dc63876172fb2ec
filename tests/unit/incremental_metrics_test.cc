#include <gtest/gtest.h>

#include "metrics/snapshot_builder.h"
#include "poll/state_publisher.h"

namespace seatwatch::metrics {
namespace {

IncrementalStatus Incremental(const std::string& mode, std::uint64_t dirty, double last_full) {
  IncrementalStatus status;
  status.mode = mode;
  status.dirty_keys = dirty;
  for (const char* reason :
       {"startup", "backstop", "resync", "unmappable", "feed_down", "drain_cost"}) {
    status.full_passes[reason] = 0;
  }
  status.full_passes["startup"] = 1;
  status.full_passes["resync"] = 3;
  status.last_full_pass_unix = last_full;
  return status;
}

PollState StateWithIncrementalCheck() {
  PollState state;
  state.version = "1.0";
  state.database_up = true;
  CheckStatus booking;
  booking.name = "booking_reconciliation";
  booking.has_run = true;
  booking.success = true;
  booking.invariants = {"sold_seat_without_ticket"};
  metrics::CheckOutput output;
  metrics::InvariantResult result;
  result.name = "sold_seat_without_ticket";
  output.invariants = {result};
  booking.output = std::make_shared<const metrics::CheckOutput>(output);
  booking.incremental = Incremental("incremental", 4, 1700000000.5);
  state.checks.push_back(booking);
  CheckStatus plain;
  plain.name = "plain";
  plain.has_run = true;
  plain.success = true;
  plain.invariants = {"other"};
  state.checks.push_back(plain);
  return state;
}

TEST(IncrementalMetricsTest, RendersDirtyKeysFullPassesAndMode) {
  std::string text = BuildSnapshot(StateWithIncrementalCheck()).MetricsText();
  EXPECT_NE(text.find("# TYPE seatwatch_dirty_keys gauge\n"), std::string::npos) << text;
  EXPECT_NE(text.find("seatwatch_dirty_keys{check=\"booking_reconciliation\"} 4\n"),
            std::string::npos);
  EXPECT_NE(text.find("# TYPE seatwatch_full_passes_total counter\n"), std::string::npos);
  for (const char* reason : {"backstop", "unmappable", "feed_down", "drain_cost"}) {
    EXPECT_NE(text.find(std::string("seatwatch_full_passes_total{check=\"booking_reconciliation\","
                                    "reason=\"") +
                        reason + "\"} 0\n"),
              std::string::npos)
        << reason;
  }
  EXPECT_NE(text.find("seatwatch_full_passes_total{check=\"booking_reconciliation\",reason="
                      "\"resync\"} 3\n"),
            std::string::npos);
  EXPECT_NE(text.find("seatwatch_check_mode{check=\"booking_reconciliation\",mode=\"incremental\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("seatwatch_check_mode{check=\"booking_reconciliation\",mode=\"full\"} 0\n"),
            std::string::npos);
  // A check that is not incremental has none of these series.
  EXPECT_EQ(text.find("check=\"plain\",mode"), std::string::npos);
  EXPECT_EQ(text.find("seatwatch_dirty_keys{check=\"plain\"}"), std::string::npos);
}

TEST(IncrementalMetricsTest, NoIncrementalCheckNoFamilies) {
  PollState state = StateWithIncrementalCheck();
  state.checks.erase(state.checks.begin());
  std::string text = BuildSnapshot(state).MetricsText();
  EXPECT_EQ(text.find("seatwatch_dirty_keys"), std::string::npos);
  EXPECT_EQ(text.find("seatwatch_check_mode"), std::string::npos);
  EXPECT_EQ(text.find("seatwatch_full_passes_total"), std::string::npos);
}

TEST(IncrementalMetricsTest, FullModeIsTheOneSetToOne) {
  PollState state = StateWithIncrementalCheck();
  state.checks[0].incremental->mode = "full";
  std::string text = BuildSnapshot(state).MetricsText();
  EXPECT_NE(text.find("seatwatch_check_mode{check=\"booking_reconciliation\",mode=\"full\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("seatwatch_check_mode{check=\"booking_reconciliation\",mode=\"incremental\"} 0\n"),
            std::string::npos);
}

TEST(IncrementalMetricsTest, InvariantsJsonSaysModeAndLastFullPass) {
  std::string json = InvariantsJson(StateWithIncrementalCheck());
  EXPECT_NE(json.find(R"({"name":"sold_seat_without_ticket","check":"booking_reconciliation",)"
                      R"("mode":"incremental","last_full_pass_unix":1700000000.5,"status":"ok")"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"({"name":"other","check":"plain","status":"unknown")"), std::string::npos)
      << json;
}

TEST(IncrementalMetricsTest, FeedSeriesArePublishedWithTheLane) {
  PollState state = StateWithIncrementalCheck();
  state.changes_metrics =
      "# HELP seatwatch_changes_up 1 while the slot drains.\n# TYPE seatwatch_changes_up gauge\n"
      "seatwatch_changes_up 1\n";
  PollState locks;
  locks.version = "1.0";
  std::string text = BuildSnapshot(poll::MergeLanes({state, locks})).MetricsText();
  EXPECT_NE(text.find("\nseatwatch_changes_up 1\n"), std::string::npos) << text;
  EXPECT_EQ(BuildSnapshot(StateWithIncrementalCheck()).MetricsText().find("seatwatch_changes_up"),
            std::string::npos);
}

}  // namespace
}  // namespace seatwatch::metrics
