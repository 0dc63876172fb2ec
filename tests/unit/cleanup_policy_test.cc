// The pure parts of a cleanup run: when it goes on, when the next starts,
// what its log line says, and how a reload decides on a restart. No database.
#include <gtest/gtest.h>

#include "cleanup/backoff_policy.h"
#include "cleanup/cleanup_service.h"
#include "cleanup/hold_cleanup.h"
#include "cleanup/run_summary.h"
#include "cleanup/stop_signal.h"

namespace seatwatch::cleanup {
namespace {

using namespace std::chrono_literals;

TEST(CleanupSummaryTest, EventsNothingFreed) { EXPECT_EQ(SummarizeEvents({}, 5), "-"); }

TEST(CleanupSummaryTest, EventsMostFirstTiesByEventThenTheRestCounted) {
  std::map<std::string, std::uint64_t> per_event = {{"7", 3}, {"12", 40}, {"3", 3}, {"9", 1},
                                                    {"1", 5}, {"2", 1},   {"4", 1}};
  EXPECT_EQ(SummarizeEvents(per_event, 3), "12:40 1:5 3:3 +4 more events");
  EXPECT_EQ(SummarizeEvents(per_event, 6), "12:40 1:5 3:3 7:3 2:1 4:1 +1 more event");
  EXPECT_EQ(SummarizeEvents(per_event, 7), "12:40 1:5 3:3 7:3 2:1 4:1 9:1");
  EXPECT_EQ(SummarizeEvents(per_event, 0), "+7 more events");
}

TEST(CleanupSummaryTest, AddsUpBatchesByEvent) {
  RunSummary summary;
  summary.AddBatch({{"1", "A1"}, {"1", "A2"}, {"2", "B1"}});
  summary.AddBatch({});
  summary.AddBatch({{"2", "B2"}});
  EXPECT_EQ(summary.freed(), 4u);
  EXPECT_EQ(summary.batches(), 3);
  EXPECT_EQ(summary.per_event().at("1"), 2u);
  EXPECT_EQ(summary.per_event().at("2"), 2u);
  EXPECT_EQ(SummarizeEvents(summary.per_event(), 5), "1:2 2:2");
}

TEST(CleanupBatchTest, FullBatchesGoOnUntilMaxBatches) {
  config::CleanupConfig config;
  config.batch_size = 20;
  config.max_batches = 3;
  EXPECT_TRUE(WantsAnotherBatch(config, 1, 20));
  EXPECT_TRUE(WantsAnotherBatch(config, 2, 20));
  EXPECT_FALSE(WantsAnotherBatch(config, 3, 20));  // max_batches reached
  EXPECT_FALSE(WantsAnotherBatch(config, 1, 19));  // the backlog is done (or locked)
  EXPECT_FALSE(WantsAnotherBatch(config, 1, 0));
  config.dry_run = true;  // cannot make progress: one batch per run
  EXPECT_FALSE(WantsAnotherBatch(config, 1, 20));
}

TEST(CleanupBatchTest, ReadsEventAndSeatByName) {
  db::Rows rows;
  rows.columns = {"seat", "event_id"};
  rows.values = {{"A1", "4"}, {"B2", "5"}};
  auto freed = FreedFromRows(rows);
  ASSERT_EQ(freed.size(), 2u);
  EXPECT_EQ(freed[0].event_id, "4");
  EXPECT_EQ(freed[0].seat, "A1");
  EXPECT_EQ(freed[1].event_id, "5");
}

TEST(CleanupBatchTest, WrongColumnsAreAnError) {
  db::Rows rows;
  rows.columns = {"event", "seat"};
  try {
    FreedFromRows(rows);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("must return the columns event_id and seat"),
              std::string::npos);
    EXPECT_NE(std::string(e.what()).find("(it returns: event, seat)"), std::string::npos);
  }
}

TEST(CleanupBackoffTest, OneIntervalWhileRunsSucceed) {
  BackoffPolicy policy(30s);
  EXPECT_EQ(policy.Next(false), 30s);
  EXPECT_EQ(policy.Next(false), 30s);
  EXPECT_EQ(policy.failures(), 0);
}

TEST(CleanupBackoffTest, DoublesAfterEachFailedRunAndResets) {
  BackoffPolicy policy(1s);
  EXPECT_EQ(policy.Next(true), 2s);
  EXPECT_EQ(policy.Next(true), 4s);
  EXPECT_EQ(policy.Next(true), 8s);
  EXPECT_EQ(policy.failures(), 3);
  EXPECT_EQ(policy.Next(false), 1s);
  EXPECT_EQ(policy.Next(true), 2s);
}

TEST(CleanupBackoffTest, CappedAt32IntervalsOrTenMinutesNeverBelowOneInterval) {
  EXPECT_EQ(BackoffPolicy::Delay(1s, 20), 32s);
  EXPECT_EQ(BackoffPolicy::Delay(30s, 4), 480s);
  EXPECT_EQ(BackoffPolicy::Delay(30s, 20), 10min);
  EXPECT_EQ(BackoffPolicy::Delay(1h, 3), 1h);
  EXPECT_EQ(BackoffPolicy::Delay(100ms, 1000), 3200ms);
  // Never a tight loop: every wait is at least the interval.
  for (int failures = 0; failures < 100; ++failures) {
    EXPECT_GE(BackoffPolicy::Delay(100ms, failures), 100ms);
  }
}

TEST(CleanupStopSignalTest, WaitEndsEarlyOnRequest) {
  StopSignal stop;
  EXPECT_FALSE(stop.WaitFor(1ms));
  EXPECT_FALSE(stop.requested());
  stop.Request();
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(stop.WaitFor(10s));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
  EXPECT_TRUE(stop.requested());
}

TEST(CleanupRestartNeededTest, OnlyWhenWhatTheCleanupUsesChanged) {
  config::Config running;
  running.cleanup.enabled = true;
  running.cleanup.sql = "WITH picked AS (...)";
  config::Config same = running;
  same.poll.interval = 3s;               // the poller's business
  same.database.statement_timeout = 1s;  // the poller's session only
  same.cleanup.where.line = 99;          // moved within the file
  EXPECT_FALSE(CleanupRestartNeeded(running, same));

  auto changed = [&](auto&& change) {
    config::Config fresh = running;
    change(fresh);
    return CleanupRestartNeeded(running, fresh);
  };
  EXPECT_TRUE(changed([](config::Config& c) { c.cleanup.enabled = false; }));
  EXPECT_TRUE(changed([](config::Config& c) { c.cleanup.sql += " "; }));
  EXPECT_TRUE(changed([](config::Config& c) { c.cleanup.batch_size = 7; }));
  EXPECT_TRUE(changed([](config::Config& c) { c.cleanup.lock_timeout = 10ms; }));
  EXPECT_TRUE(changed([](config::Config& c) { c.cleanup.dry_run = true; }));
  EXPECT_TRUE(changed([](config::Config& c) { c.database.dsn = "postgresql:///other"; }));
  EXPECT_TRUE(changed([](config::Config& c) { c.database.application_name = "sw2"; }));

  config::Config off;  // off before and after: nothing to restart
  config::Config still_off = off;
  still_off.cleanup.batch_size = 3;
  EXPECT_FALSE(CleanupRestartNeeded(off, still_off));
  config::Config on = off;
  on.cleanup.enabled = true;
  EXPECT_TRUE(CleanupRestartNeeded(off, on));
}

}  // namespace
}  // namespace seatwatch::cleanup
