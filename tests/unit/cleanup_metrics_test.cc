// The cleanup's own series as the HTTP thread serves them. No database.
#include "cleanup/cleanup_metrics.h"

#include <gtest/gtest.h>

#include "cleanup/published_text.h"
#include "unit/text_expectations.h"

namespace seatwatch::cleanup {
namespace {

using namespace std::chrono_literals;

config::CleanupConfig Enabled() {
  config::CleanupConfig config;
  config.enabled = true;
  config.interval = 30s;
  return config;
}

using seatwatch::testing::ExpectLines;
using seatwatch::testing::HasLine;

TEST(CleanupMetricsTest, EveryFamilyFromTheStart) {
  std::string text = CleanupMetrics(Enabled()).Render();
  ExpectLines(text, {"seatwatch_cleanup_enabled 1", "seatwatch_cleanup_leader 0",
                     "seatwatch_cleanup_in_recovery 0",
                     "# TYPE seatwatch_cleanup_in_recovery gauge",
                     "seatwatch_cleanup_interval_seconds 30", "seatwatch_cleanup_freed_total 0",
                     "seatwatch_cleanup_batches_total{result=\"ok\"} 0",
                     "seatwatch_cleanup_batches_total{result=\"lock_timeout\"} 0",
                     "seatwatch_cleanup_batches_total{result=\"error\"} 0",
                     "seatwatch_cleanup_batch_duration_seconds_count 0",
                     "seatwatch_cleanup_last_success_timestamp_seconds 0",
                     "# TYPE seatwatch_cleanup_freed_total counter",
                     "# TYPE seatwatch_cleanup_batch_duration_seconds histogram"});
}

TEST(CleanupMetricsTest, DisabledStillExportsEnabledAndLeaderZero) {
  CleanupMetrics metrics{config::CleanupConfig{}};
  metrics.SetLeader(true);
  metrics.Configure(config::CleanupConfig{});  // disabled: never a leader
  std::string text = metrics.Render();
  ExpectLines(text, {"seatwatch_cleanup_enabled 0", "seatwatch_cleanup_leader 0"});
}

TEST(CleanupMetricsTest, InRecoveryInTheGaugeAndTheStatusUntilDisabled) {
  CleanupMetrics metrics(Enabled());
  metrics.SetInRecovery(true);
  EXPECT_TRUE(HasLine(metrics.Render(), "seatwatch_cleanup_in_recovery 1")) << metrics.Render();
  EXPECT_TRUE(metrics.Status().in_recovery);
  metrics.SetInRecovery(false);
  EXPECT_TRUE(HasLine(metrics.Render(), "seatwatch_cleanup_in_recovery 0")) << metrics.Render();
  EXPECT_FALSE(metrics.Status().in_recovery);
  metrics.SetInRecovery(true);
  metrics.Configure(config::CleanupConfig{});  // disabled: no connection, nothing known
  EXPECT_TRUE(HasLine(metrics.Render(), "seatwatch_cleanup_in_recovery 0")) << metrics.Render();
}

TEST(CleanupMetricsTest, CountsBatchesFreedAndDurations) {
  CleanupMetrics metrics(Enabled());
  metrics.SetLeader(true);
  metrics.ObserveBatch(BatchResult::kOk, 0.004);
  metrics.AddFreed(500);
  metrics.ObserveBatch(BatchResult::kOk, 0.03);
  metrics.AddFreed(12);
  metrics.ObserveBatch(BatchResult::kLockTimeout, 0.051);
  metrics.ObserveBatch(BatchResult::kError, 2.0);
  metrics.SetLastSuccess(1700000000.5);
  std::string text = metrics.Render();
  ExpectLines(text, {"seatwatch_cleanup_leader 1", "seatwatch_cleanup_freed_total 512",
                     "seatwatch_cleanup_batches_total{result=\"ok\"} 2",
                     "seatwatch_cleanup_batches_total{result=\"lock_timeout\"} 1",
                     "seatwatch_cleanup_batches_total{result=\"error\"} 1",
                     "seatwatch_cleanup_batch_duration_seconds_bucket{le=\"0.005\"} 1",
                     "seatwatch_cleanup_batch_duration_seconds_bucket{le=\"0.05\"} 2",
                     "seatwatch_cleanup_batch_duration_seconds_bucket{le=\"0.1\"} 3",
                     "seatwatch_cleanup_batch_duration_seconds_bucket{le=\"2.5\"} 4",
                     "seatwatch_cleanup_batch_duration_seconds_bucket{le=\"+Inf\"} 4",
                     "seatwatch_cleanup_batch_duration_seconds_count 4",
                     "seatwatch_cleanup_last_success_timestamp_seconds 1700000000.5"});
}

TEST(CleanupMetricsTest, ReloadKeepsCountersAndTakesTheNewInterval) {
  CleanupMetrics metrics(Enabled());
  metrics.AddFreed(3);
  metrics.ObserveBatch(BatchResult::kOk, 0.01);
  config::CleanupConfig fresh = Enabled();
  fresh.interval = 1500ms;
  CleanupMetrics copy = metrics;  // what a restarted worker takes over
  copy.Configure(fresh);
  EXPECT_EQ(copy.freed(), 3u);
  EXPECT_EQ(copy.batches(BatchResult::kOk), 1u);
  EXPECT_TRUE(HasLine(copy.Render(), "seatwatch_cleanup_interval_seconds 1.5"));
}

TEST(CleanupMetricsTest, BucketsAreSortedAndCoverTheStatementTimeout) {
  const auto& buckets = CleanupMetrics::BatchBuckets();
  EXPECT_TRUE(std::is_sorted(buckets.begin(), buckets.end()));
  EXPECT_LE(buckets.front(), 0.001);
  EXPECT_GE(buckets.back(), 2.0);  // the default statement_timeout
}

TEST(CleanupMetricsTest, PublishedTextReadersKeepTheTextTheyGot) {
  PublishedText out;
  EXPECT_EQ(*out.Current(), "");
  out.Publish("a 1\n");
  auto held = out.Current();
  out.Publish("a 2\n");
  EXPECT_EQ(*held, "a 1\n");
  EXPECT_EQ(*out.Current(), "a 2\n");
}

}  // namespace
}  // namespace seatwatch::cleanup
