#include "metrics/violation_lifecycle.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "metrics/snapshot_builder.h"
#include "unit/text_expectations.h"

namespace seatwatch::metrics {
namespace {

using seatwatch::testing::ExpectContains;

InvariantResult Result(const std::string& name, std::vector<std::pair<std::string, double>> keys) {
  InvariantResult result;
  result.name = name;
  for (const auto& [event, value] : keys) result.violations.push_back({{{"event_id", event}}, value});
  return result;
}

TEST(ViolationLifecycleTest, AKeyOpensStaysOpenAndHealsWithItsDuration) {
  ViolationLifecycle lifecycle(50);
  EXPECT_TRUE(lifecycle.Observe("booking", {Result("sold_seat_without_ticket", {{"1", 2}})}, 100));
  EXPECT_FALSE(lifecycle.Observe("booking", {Result("sold_seat_without_ticket", {{"1", 3}})}, 110));
  auto state = lifecycle.State();
  const OpenViolation* open =
      FindOpen(*state, "booking", "sold_seat_without_ticket", {{"event_id", "1"}});
  ASSERT_NE(open, nullptr);
  EXPECT_EQ(open->since_unix, 100);
  EXPECT_EQ(open->last_seen_unix, 110);
  const auto& counts = state->counts.at({"booking", "sold_seat_without_ticket"});
  EXPECT_EQ(counts.detected, 1u);
  EXPECT_EQ(counts.healed, 0u);

  EXPECT_TRUE(lifecycle.Observe("booking", {Result("sold_seat_without_ticket", {})}, 130));
  state = lifecycle.State();
  EXPECT_EQ(FindOpen(*state, "booking", "sold_seat_without_ticket", {{"event_id", "1"}}), nullptr);
  const auto& after = state->counts.at({"booking", "sold_seat_without_ticket"});
  EXPECT_EQ(after.healed, 1u);
  EXPECT_EQ(after.durations.count(), 1u);
  EXPECT_EQ(after.durations.sum(), 30);
  ASSERT_EQ(state->healed.size(), 1u);
  EXPECT_EQ(state->healed[0].since_unix, 100);
  EXPECT_EQ(state->healed[0].healed_unix, 130);
  EXPECT_EQ(state->started_unix, 50);

  // Violated again: a new lifecycle, counted again.
  lifecycle.Observe("booking", {Result("sold_seat_without_ticket", {{"1", 1}})}, 140);
  state = lifecycle.State();
  EXPECT_EQ(FindOpen(*state, "booking", "sold_seat_without_ticket", {{"event_id", "1"}})->since_unix,
            140);
  EXPECT_EQ(state->counts.at({"booking", "sold_seat_without_ticket"}).detected, 2u);
}

TEST(ViolationLifecycleTest, ARowOfZeroIsNoViolationAndOtherInvariantsAreLeftAlone) {
  ViolationLifecycle lifecycle(0);
  lifecycle.Observe("booking",
                    {Result("fan_over_limit", {{"1", 0}, {"2", 1}}),
                     Result("fan_over_limit_held", {{"2", 1}})},
                    10);
  auto state = lifecycle.State();
  EXPECT_EQ(FindOpen(*state, "booking", "fan_over_limit", {{"event_id", "1"}}), nullptr);
  EXPECT_NE(FindOpen(*state, "booking", "fan_over_limit", {{"event_id", "2"}}), nullptr);
  // fan_over_limit heals; fan_over_limit_held, whose name starts the same,
  // is not in this run's output and stays as it was.
  lifecycle.Observe("booking", {Result("fan_over_limit", {})}, 20);
  state = lifecycle.State();
  EXPECT_EQ(FindOpen(*state, "booking", "fan_over_limit", {{"event_id", "2"}}), nullptr);
  EXPECT_NE(FindOpen(*state, "booking", "fan_over_limit_held", {{"event_id", "2"}}), nullptr);
  EXPECT_EQ(state->counts.at({"booking", "fan_over_limit_held"}).healed, 0u);
}

TEST(ViolationLifecycleTest, AnInvariantNoLongerConfiguredIsDroppedNotHealed) {
  ViolationLifecycle lifecycle(0);
  lifecycle.Observe("booking", {Result("a", {{"1", 1}}), Result("b", {{"1", 1}})}, 10);
  EXPECT_TRUE(lifecycle.Retain({{"booking", "a"}}));
  auto state = lifecycle.State();
  EXPECT_NE(FindOpen(*state, "booking", "a", {{"event_id", "1"}}), nullptr);
  EXPECT_EQ(FindOpen(*state, "booking", "b", {{"event_id", "1"}}), nullptr);
  EXPECT_EQ(state->counts.count({"booking", "b"}), 0u);
  EXPECT_TRUE(state->healed.empty());
  EXPECT_FALSE(lifecycle.Retain({{"booking", "a"}}));
}

TEST(ViolationLifecycleTest, OpenKeysAndHealedOnesAreBounded) {
  ViolationLifecycle lifecycle(0);
  std::vector<std::pair<std::string, double>> keys;
  for (size_t i = 0; i < ViolationLifecycle::kMaxOpen + 5; ++i) keys.push_back({std::to_string(i), 1});
  lifecycle.Observe("booking", {Result("a", keys)}, 10);
  auto state = lifecycle.State();
  EXPECT_EQ(state->open.size(), ViolationLifecycle::kMaxOpen);
  EXPECT_EQ(state->untracked, 5u);
  EXPECT_EQ(state->counts.at({"booking", "a"}).detected, ViolationLifecycle::kMaxOpen + 5);

  lifecycle.Observe("booking", {Result("a", {})}, 20);
  state = lifecycle.State();
  EXPECT_TRUE(state->open.empty());
  EXPECT_EQ(state->counts.at({"booking", "a"}).healed, ViolationLifecycle::kMaxOpen);
  EXPECT_EQ(state->healed.size(), ViolationLifecycle::kMaxHealed);
}

TEST(ViolationLifecycleTest, TheSnapshotShowsEachKeysSinceTheCountsAndTheHealed) {
  ViolationLifecycle lifecycle(1000);
  lifecycle.Observe("booking", {Result("sold_seat_without_ticket", {{"7", 2}, {"8", 1}})}, 1100);
  lifecycle.Observe("booking", {Result("sold_seat_without_ticket", {{"7", 2}})}, 1160);

  PollState state;
  CheckStatus check;
  check.name = "booking";
  check.has_run = true;
  check.success = true;
  check.invariants = {"sold_seat_without_ticket", "ticket_without_sold_seat"};
  CheckOutput output;
  output.invariants = {Result("sold_seat_without_ticket", {{"7", 2}}),
                       Result("ticket_without_sold_seat", {})};
  check.output = std::make_shared<const CheckOutput>(output);
  state.checks.push_back(check);
  state.lifecycles = {lifecycle.State()};

  Snapshot snapshot = BuildSnapshot(state);
  ExpectContains(
      snapshot.MetricsText(),
      {"seatwatch_invariant_violated_since_timestamp_seconds{check=\"booking\",invariant=\"sold_"
       "seat_without_ticket\",event_id=\"7\"} 1100\n",
       "seatwatch_invariant_violations_detected_total{check=\"booking\",invariant=\"sold_seat_"
       "without_ticket\"} 2\n",
       "seatwatch_invariant_violations_healed_total{check=\"booking\",invariant=\"sold_seat_"
       "without_ticket\"} 1\n",
       "seatwatch_invariant_violations_detected_total{check=\"booking\",invariant=\"ticket_"
       "without_sold_seat\"} 0\n",
       "seatwatch_invariant_violation_duration_seconds_bucket{check=\"booking\",invariant=\"sold_"
       "seat_without_ticket\",le=\"30\"} 0\n",
       "seatwatch_invariant_violation_duration_seconds_bucket{check=\"booking\",invariant=\"sold_"
       "seat_without_ticket\",le=\"60\"} 1\n",
       "seatwatch_invariant_violation_duration_seconds_sum{check=\"booking\",invariant=\"sold_"
       "seat_without_ticket\"} 60\n",
       "seatwatch_invariant_violations_untracked_total 0\n"});
  EXPECT_EQ(snapshot.MetricsText().find("event_id=\"8\""), std::string::npos);
  ExpectContains(snapshot.invariants_json,
                 {"\"labels\":{\"event_id\":\"7\"},\"value\":2,\"since_timestamp_seconds\":1100}",
                  "\"lifecycle_since_timestamp_seconds\":1000,",
                  "\"healed\":[{\"invariant\":\"sold_seat_without_ticket\",\"check\":\"booking\","
                  "\"labels\":{\"event_id\":\"8\"},\"since_timestamp_seconds\":1100,"
                  "\"healed_timestamp_seconds\":1160,\"lasted_seconds\":60}]"});
}

}  // namespace
}  // namespace seatwatch::metrics
