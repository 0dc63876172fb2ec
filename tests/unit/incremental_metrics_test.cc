#include <gtest/gtest.h>

#include "metrics/snapshot_builder.h"
#include "poll/state_publisher.h"
#include "unit/text_expectations.h"

namespace seatwatch::metrics {
namespace {

using seatwatch::testing::ExpectContains;
using seatwatch::testing::ExpectLacks;

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
  const std::string passes =
      "seatwatch_full_passes_total{check=\"booking_reconciliation\",reason=";
  ExpectContains(text, {"# TYPE seatwatch_dirty_keys gauge\n",
                        "seatwatch_dirty_keys{check=\"booking_reconciliation\"} 4\n",
                        "# TYPE seatwatch_full_passes_total counter\n",
                        passes + "\"backstop\"} 0\n", passes + "\"unmappable\"} 0\n",
                        passes + "\"feed_down\"} 0\n", passes + "\"drain_cost\"} 0\n",
                        passes + "\"resync\"} 3\n",
                        "seatwatch_check_mode{check=\"booking_reconciliation\","
                        "mode=\"incremental\"} 1\n",
                        "seatwatch_check_mode{check=\"booking_reconciliation\","
                        "mode=\"full\"} 0\n"});
  // A check that is not incremental has none of these series.
  ExpectLacks(text, {"check=\"plain\",mode", "seatwatch_dirty_keys{check=\"plain\"}"});
}

TEST(IncrementalMetricsTest, NoIncrementalCheckNoFamilies) {
  PollState state = StateWithIncrementalCheck();
  state.checks.erase(state.checks.begin());
  std::string text = BuildSnapshot(state).MetricsText();
  ExpectLacks(text,
              {"seatwatch_dirty_keys", "seatwatch_check_mode", "seatwatch_full_passes_total"});
}

TEST(IncrementalMetricsTest, FullModeIsTheOneSetToOne) {
  PollState state = StateWithIncrementalCheck();
  state.checks[0].incremental->mode = "full";
  std::string text = BuildSnapshot(state).MetricsText();
  ExpectContains(text, {"seatwatch_check_mode{check=\"booking_reconciliation\",mode=\"full\"} 1\n",
                        "seatwatch_check_mode{check=\"booking_reconciliation\","
                        "mode=\"incremental\"} 0\n"});
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
