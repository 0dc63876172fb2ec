#include "metrics/snapshot_builder.h"

#include <gtest/gtest.h>

#include "metrics/family.h"
#include "unit/text_expectations.h"

namespace seatwatch::metrics {
namespace {

using seatwatch::testing::ExpectContains;

CheckStatus Status(const std::string& name, bool success) {
  CheckStatus status;
  status.name = name;
  status.interval_seconds = 10;
  status.has_run = true;
  status.success = success;
  status.duration_seconds = 0.25;
  status.last_success_unix = success ? 1700000000 : 0;
  status.errors = {{"connection", 0}, {"lock_timeout", 0}, {"sql", 0}, {"timeout", success ? 0u : 2u}};
  return status;
}

PollState StateWithViolation() {
  PollState state;
  state.version = "1.2.3";
  state.database_up = true;
  state.last_poll_unix = 1700000001;
  state.last_successful_poll_unix = 1700000001;
  state.poll_interval_seconds = 10;
  CheckStatus check = Status("booking", true);
  check.invariants = {"sold_seat_without_ticket", "ticket_without_sold_seat"};
  metrics::CheckOutput output;
  metrics::InvariantResult violated;
  violated.name = "sold_seat_without_ticket";
  violated.violations.push_back({{{"event_id", "7"}}, 2});
  metrics::InvariantResult fine;
  fine.name = "ticket_without_sold_seat";
  output.invariants = {violated, fine};
  check.output = std::make_shared<const metrics::CheckOutput>(output);
  check.rendered = RenderedText::Of(
      RenderText({SingleGauge("seatwatch_event_inventory", "inv", 5)}));
  state.checks.push_back(check);
  CheckStatus failing = Status("holds", false);
  failing.invariants = {"some_failing_invariant"};
  failing.help = {{"some_failing_invariant", "Holds are \"stuck\""}};
  state.checks.push_back(failing);
  state.history["sold_seat_without_ticket"] = {false, 1699999990};
  return state;
}

TEST(SnapshotBuilderTest, RendersInvariantAndCheckSeries) {
  std::string text = BuildSnapshot(StateWithViolation()).MetricsText();
  ExpectContains(
      text,
      {"seatwatch_up 1\n", "seatwatch_build_info{version=\"1.2.3\"} 1\n",
       "seatwatch_invariant_ok{invariant=\"sold_seat_without_ticket\"} 0\n",
       "seatwatch_invariant_ok{invariant=\"ticket_without_sold_seat\"} 1\n",
       "seatwatch_invariant_violations{invariant=\"sold_seat_without_ticket\",event_id=\"7\"} 2\n",
       "seatwatch_invariant_status_since_timestamp_seconds"
       "{invariant=\"sold_seat_without_ticket\"} 1699999990\n",
       "seatwatch_check_success{check=\"holds\"} 0\n",
       "seatwatch_check_errors_total{check=\"holds\",reason=\"timeout\"} 2\n",
       "# TYPE seatwatch_check_errors_total counter", "seatwatch_event_inventory 5\n"});
}

TEST(SnapshotBuilderTest, SharesEachChecksTextInsteadOfCopyingIt) {
  PollState state = StateWithViolation();
  Snapshot snapshot = BuildSnapshot(state);
  ASSERT_EQ(snapshot.metrics_parts.size(), 2u);  // own families, then the one check's text
  EXPECT_EQ(snapshot.metrics_parts[1].get(), state.checks[0].rendered->parts[0].get());
  EXPECT_EQ(snapshot.MetricsText(),
            *snapshot.metrics_parts[0] + state.checks[0].rendered->Text());
}

TEST(SnapshotBuilderTest, FailingCheckExportsNoStaleOk) {
  std::string text = BuildSnapshot(StateWithViolation()).MetricsText();
  EXPECT_EQ(text.find("seatwatch_invariant_ok{invariant=\"some_failing_invariant\"}"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("seatwatch_invariant_violations{invariant=\"some_failing_invariant\""),
            std::string::npos)
      << text;
}

// What the alerts name: every configured invariant's check and help, also
// while its check fails (SeatwatchCheckFailing lists them then).
TEST(SnapshotBuilderTest, InvariantInfoNamesCheckAndHelpWhateverTheCheckDoes) {
  std::string text = BuildSnapshot(StateWithViolation()).MetricsText();
  EXPECT_NE(text.find("seatwatch_invariant_info{check=\"holds\",invariant=\"some_failing_"
                      "invariant\",help=\"Holds are \\\"stuck\\\"\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("seatwatch_invariant_info{check=\"booking\",invariant=\"sold_seat_without_"
                      "ticket\",help=\"\"} 1\n"),
            std::string::npos)
      << text;
}

TEST(SnapshotBuilderTest, EmptyFamiliesAreDropped) {
  PollState state;
  state.version = "x";
  std::string text = BuildSnapshot(state).MetricsText();
  EXPECT_EQ(text.find("seatwatch_invariant_ok"), std::string::npos) << text;
  EXPECT_NE(text.find("seatwatch_up 0\n"), std::string::npos);
}

TEST(SnapshotBuilderTest, InvariantsJsonShowsStatusAndUnknown) {
  std::string json = InvariantsJson(StateWithViolation());
  ExpectContains(json,
                 {R"({"name":"sold_seat_without_ticket","check":"booking","status":"violated")",
                  R"("violations":[{"labels":{"event_id":"7"},"value":2}])",
                  R"({"name":"ticket_without_sold_seat","check":"booking","status":"ok")",
                  R"({"name":"some_failing_invariant","check":"holds","status":"unknown")"});
}

TEST(HistogramDataTest, CumulativeBuckets) {
  HistogramData histogram({0.1, 1, 10});
  histogram.Observe(0.05);
  histogram.Observe(0.5);
  histogram.Observe(0.5);
  histogram.Observe(100);
  auto family = HistogramFamily("h_seconds", "help");
  histogram.AddTo(family);
  const auto& h = family.metric[0].histogram;
  ASSERT_EQ(h.bucket.size(), 4u);
  EXPECT_EQ(h.bucket[0].cumulative_count, 1u);
  EXPECT_EQ(h.bucket[1].cumulative_count, 3u);
  EXPECT_EQ(h.bucket[2].cumulative_count, 3u);
  EXPECT_EQ(h.bucket[3].cumulative_count, 4u);
  EXPECT_EQ(h.sample_count, 4u);
  EXPECT_DOUBLE_EQ(h.sample_sum, 101.05);
}

}  // namespace
}  // namespace seatwatch::metrics
