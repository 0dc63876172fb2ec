// The cleanup's structured status, as the status page reads it from the
// HTTP threads. No database.
#include "cleanup/cleanup_status.h"

#include <gtest/gtest.h>

#include "cleanup/cleanup_metrics.h"
#include "cleanup/published_text.h"

namespace seatwatch::cleanup {
namespace {

using namespace std::chrono_literals;

TEST(CleanupStatusTest, StatusHoldsWhatTheMetricsCount) {
  config::CleanupConfig config;
  config.enabled = true;
  config.dry_run = true;
  config.interval = 30s;
  CleanupMetrics metrics(config);
  metrics.SetLeader(true);
  metrics.AddFreed(7);
  metrics.ObserveBatch(BatchResult::kOk, 0.01);
  metrics.ObserveBatch(BatchResult::kOk, 0.01);
  metrics.ObserveBatch(BatchResult::kLockTimeout, 0.05);
  metrics.SetLastSuccess(1000);
  CleanupStatus status = metrics.Status();
  EXPECT_TRUE(status.enabled);
  EXPECT_TRUE(status.dry_run);
  EXPECT_TRUE(status.leader);
  EXPECT_EQ(status.interval_seconds, 30);
  EXPECT_EQ(status.freed, 7u);
  EXPECT_EQ(status.batches_ok, 2u);
  EXPECT_EQ(status.batches_lock_timeout, 1u);
  EXPECT_EQ(status.batches_error, 0u);
  EXPECT_EQ(status.last_success_unix, 1000);
  EXPECT_EQ(status.last_run_unix, 0);  // no run recorded yet
  EXPECT_EQ(status.last_run_result, "");

  metrics.SetLastRun(1010, BatchResult::kLockTimeout, 3, "canceling statement due to lock timeout");
  status = metrics.Status();
  EXPECT_EQ(status.last_run_unix, 1010);
  EXPECT_EQ(status.last_run_result, "lock_timeout");
  EXPECT_EQ(status.last_run_freed, 3u);
  EXPECT_EQ(status.last_run_error, "canceling statement due to lock timeout");
}

TEST(CleanupStatusTest, PublishedWithItsTextAndKeptByReaders) {
  config::CleanupConfig config;
  config.enabled = true;
  CleanupMetrics metrics(config);
  PublishedText out;
  EXPECT_FALSE(out.Status()->enabled);  // before the first publish: a default status
  out.Publish(metrics);
  auto first = out.Status();
  EXPECT_TRUE(first->enabled);
  EXPECT_EQ(first->freed, 0u);
  metrics.AddFreed(5);
  out.Publish(metrics);
  EXPECT_EQ(first->freed, 0u);  // a reader's copy never changes under it
  EXPECT_EQ(out.Status()->freed, 5u);
  EXPECT_NE(out.Current()->find("seatwatch_cleanup_freed_total 5"), std::string::npos);
}

}  // namespace
}  // namespace seatwatch::cleanup
