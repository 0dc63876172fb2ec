#include "poll/recheck_budget.h"

#include <chrono>
#include <string>

#include <gtest/gtest.h>


namespace seatwatch::poll {
namespace {

using namespace std::chrono_literals;

config::Config Changes(config::Millis interval, config::Millis per_minute,
                       config::Millis poll = 10s) {
  config::Config config;
  config.changes.interval = interval;
  config.changes.recheck_time_per_minute = per_minute;
  config.poll.interval = poll;
  return config;
}

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

TEST(RecheckBudgetTest, CheapRechecksKeepTheInterval) {
  RecheckBudget budget(Changes(200ms, 1s));
  EXPECT_DOUBLE_EQ(budget.interval_seconds(), 0.2);  // before any recheck
  Clock::time_point start = Clock::now();
  // 3 ms against 1 s a minute: 0.18 s, under the interval.
  EXPECT_DOUBLE_EQ(Seconds(budget.Record(start, 0.003) - start), 0.2);
  EXPECT_DOUBLE_EQ(budget.interval_seconds(), 0.2);
  EXPECT_DOUBLE_EQ(Seconds(budget.Record(start, 0.0) - start), 0.2);
}

TEST(RecheckBudgetTest, ADearCycleHoldsTheNextBackToItsShareOfTheMinute) {
  RecheckBudget budget(Changes(200ms, 1s));
  Clock::time_point start = Clock::now();
  // 27 ms (the booking pack's recheck of four hot events at 20M seats)
  // at 1 s a minute: 1.62 s from this cycle's start.
  EXPECT_NEAR(Seconds(budget.Record(start, 0.027) - start), 1.62, 1e-6);
  EXPECT_NEAR(budget.interval_seconds(), 1.62, 1e-9);
  // The next cheap one lets the interval back in.
  EXPECT_DOUBLE_EQ(Seconds(budget.Record(start, 0.001) - start), 0.2);
  EXPECT_NEAR(budget.recheck_seconds_total(), 0.028, 1e-12);
}

TEST(RecheckBudgetTest, AMinuteOfDearCyclesStaysWithinTheBudget) {
  // Back to back, each cycle as early as allowed: the rechecks of any
  // minute add up to the budget, whatever each costs.
  for (double cost : {0.004, 0.027, 0.3}) {
    RecheckBudget budget(Changes(100ms, 2s));
    Clock::time_point start = Clock::now();
    Clock::time_point end = start + 60s;
    double spent = 0;
    for (Clock::time_point at = start; at < end; at = budget.Record(at, cost)) spent += cost;
    EXPECT_LE(spent, 2.0 + cost) << cost;
    if (cost >= 0.1) {
      EXPECT_GE(spent, 2.0 - cost) << cost;
    }
  }
}

TEST(RecheckBudgetTest, NeverLaterThanAFullPassWouldRun) {
  RecheckBudget budget(Changes(200ms, 1s, 10s));
  Clock::time_point start = Clock::now();
  // 2.5 s against 1 s a minute would be 150 s: [poll] interval, 10 s.
  EXPECT_DOUBLE_EQ(Seconds(budget.Record(start, 2.5) - start), 10.0);
  EXPECT_DOUBLE_EQ(budget.interval_seconds(), 10.0);
}

TEST(RecheckBudgetTest, KeysWrittenOnceDoNotHoldItBackWithoutEnd) {
  // 100 keys a second each written once, 2 ms to recheck each: a cycle
  // rechecks what the wait before it gathered, so each hold-back makes the
  // next cycle dearer (0.2 s a second against 1 s a minute: twelve times
  // dearer each time). The wait stays at [poll] interval.
  RecheckBudget budget(Changes(200ms, 1s, 10s));
  Clock::time_point at = Clock::now();
  double wait = 0.2;
  for (int cycle = 0; cycle < 20; ++cycle) {
    Clock::time_point next = budget.Record(at, 100 * 0.002 * wait);
    wait = Seconds(next - at);
    at = next;
    EXPECT_LE(wait, 10.0) << cycle;
  }
  EXPECT_DOUBLE_EQ(wait, 10.0);
}

TEST(RecheckBudgetTest, AReloadTakesTheNewBudget) {
  RecheckBudget budget(Changes(1s, 1s));
  Clock::time_point start = Clock::now();
  EXPECT_DOUBLE_EQ(Seconds(budget.Record(start, 0.05) - start), 3.0);
  budget.Configure(Changes(1s, 6s, 2s));
  EXPECT_DOUBLE_EQ(budget.interval_seconds(), 2.0);  // the last wait, within the new bounds
  EXPECT_DOUBLE_EQ(Seconds(budget.Record(start, 0.05) - start), 1.0);
}

TEST(RecheckBudgetTest, RendersTheCounterAndTheInterval) {
  RecheckBudget budget(Changes(200ms, 1s));
  budget.Record(Clock::now(), 0.027);
  budget.Record(Clock::now(), 0.1);
  std::string text = budget.RenderMetrics();
  EXPECT_NE(text.find("# TYPE seatwatch_changes_recheck_seconds_total counter\n"
                      "seatwatch_changes_recheck_seconds_total 0.127\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# TYPE seatwatch_changes_recheck_interval_seconds gauge\n"
                      "seatwatch_changes_recheck_interval_seconds 6\n"),
            std::string::npos)
      << text;
}

TEST(RecheckBudgetTest, ARecheckIsARunOfASeededCheckThatCountedNoFullPass) {
  metrics::IncrementalStatus seeded;
  seeded.mode = "incremental";
  seeded.full_passes = {{"startup", 1}, {"backstop", 0}};
  metrics::IncrementalStatus after = seeded;
  EXPECT_TRUE(WasRecheck(seeded, after));
  after.full_passes["backstop"] = 1;  // the backstop's hour came
  EXPECT_FALSE(WasRecheck(seeded, after));
  metrics::IncrementalStatus unseeded = seeded;
  unseeded.mode = "full";  // the run that seeds it is a full pass
  EXPECT_FALSE(WasRecheck(unseeded, seeded));
}

}  // namespace
}  // namespace seatwatch::poll
