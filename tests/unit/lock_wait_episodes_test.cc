// Lock-wait episodes across polls: counted once, observed when they end.
#include <gtest/gtest.h>

#include "locks/wait_episodes.h"

namespace seatwatch::locks {
namespace {

WaitEpisodes Episodes(double threshold = 5) { return WaitEpisodes(threshold, LockWaitBuckets()); }

TEST(LockWaitEpisodesTest, NewEpisodeIsCountedOnce) {
  WaitEpisodes episodes = Episodes();
  EXPECT_EQ(episodes.Update({{7, 1000, 0.5}}).started, 1);
  EXPECT_EQ(episodes.Update({{7, 1000, 2.5}}).started, 0);
  EXPECT_EQ(episodes.Update({{7, 1000, 4.5}}).started, 0);
  EXPECT_EQ(episodes.total(), 1u);
  EXPECT_EQ(episodes.durations().count(), 0u);
  EXPECT_EQ(episodes.open(), 1u);
}

TEST(LockWaitEpisodesTest, EndedEpisodeIsObservedWithItsLastSeenWait) {
  WaitEpisodes episodes = Episodes();
  episodes.Update({{7, 1000, 0.5}, {8, 2000, 0.1}});
  episodes.Update({{7, 1000, 2.5}, {8, 2000, 2.1}});
  EpisodeChanges changes = episodes.Update({{8, 2000, 4.1}});
  ASSERT_EQ(changes.ended.size(), 1u);
  EXPECT_DOUBLE_EQ(changes.ended[0], 2.5);
  EXPECT_EQ(episodes.durations().count(), 1u);
  EXPECT_DOUBLE_EQ(episodes.durations().sum(), 2.5);
  episodes.Update({});
  EXPECT_EQ(episodes.durations().count(), 2u);
  EXPECT_DOUBLE_EQ(episodes.durations().sum(), 2.5 + 4.1);
  EXPECT_EQ(episodes.total(), 2u);
  EXPECT_EQ(episodes.open(), 0u);

  prometheus::MetricFamily family = metrics::HistogramFamily("h", "h");
  episodes.durations().AddTo(family);
  const auto& buckets = family.metric.at(0).histogram.bucket;
  // 2.5 falls in le=2.5, 4.1 in le=5.
  auto cumulative = [&](double bound) {
    for (const auto& bucket : buckets) {
      if (bucket.upper_bound == bound) return bucket.cumulative_count;
    }
    return std::uint64_t{999};
  };
  EXPECT_EQ(cumulative(1), 0u);
  EXPECT_EQ(cumulative(2.5), 1u);
  EXPECT_EQ(cumulative(5), 2u);
}

TEST(LockWaitEpisodesTest, SamePidWithANewStartIsANewEpisode) {
  WaitEpisodes episodes = Episodes();
  episodes.Update({{7, 1000, 3}});
  EpisodeChanges changes = episodes.Update({{7, 9000, 0.2}});
  EXPECT_EQ(changes.started, 1);
  ASSERT_EQ(changes.ended.size(), 1u);
  EXPECT_DOUBLE_EQ(changes.ended[0], 3);
  EXPECT_EQ(episodes.total(), 2u);
}

TEST(LockWaitEpisodesTest, WaitWithoutKnownStartIsCountedOnceItIsKnown) {
  WaitEpisodes episodes = Episodes();
  EXPECT_EQ(episodes.Update({{7, std::nullopt, 0}}).started, 0);
  EXPECT_EQ(episodes.total(), 0u);
  EXPECT_EQ(episodes.Update({{7, 1000, 2}}).started, 1);
  // An unknown start of a known episode keeps the episode open.
  EXPECT_EQ(episodes.Update({{7, std::nullopt, 4}}).started, 0);
  EXPECT_EQ(episodes.open(), 1u);
  EXPECT_EQ(episodes.total(), 1u);
}

TEST(LockWaitEpisodesTest, ThresholdIsReportedOncePerEpisode) {
  WaitEpisodes episodes = Episodes(5);
  EXPECT_TRUE(episodes.Update({{7, 1000, 2}}).crossed_threshold.empty());
  EXPECT_EQ(episodes.Update({{7, 1000, 6}}).crossed_threshold, std::vector<int>{7});
  EXPECT_TRUE(episodes.Update({{7, 1000, 8}}).crossed_threshold.empty());
  // A new episode of the same pid may be reported again.
  EXPECT_EQ(episodes.Update({{7, 5000, 9}}).crossed_threshold, std::vector<int>{7});
}

}  // namespace
}  // namespace seatwatch::locks
