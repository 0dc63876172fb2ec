// Failovers are counted once per change of server, however many lanes see
// it, and never for what only looks like a change.
#include "poll/failover_tracker.h"

#include <gtest/gtest.h>

#include "unit/text_expectations.h"

namespace seatwatch::poll {
namespace {

using seatwatch::testing::ExpectContains;

constexpr std::size_t kChecks = 0;
constexpr std::size_t kLocks = 1;

metrics::LaneServer Server(const std::string& system_identifier, std::uint32_t timeline,
                           bool in_recovery = false) {
  metrics::LaneServer server;
  server.lane = "checks";
  server.facts.in_recovery = in_recovery;
  server.facts.system_identifier = system_identifier;
  server.facts.timeline = timeline;
  return server;
}

// Both lanes read the primary on timeline 1.
void SeeBothLanesOnThePrimary(FailoverTracker& tracker) {
  tracker.Observe(kChecks, Server("7001", 1));
  tracker.Observe(kLocks, Server("7001", 1));
}

// The lane sees the primary on timeline 1, then promoted to 2: one counted
// failover.
void SeeFailoverOn(FailoverTracker& tracker, std::size_t lane) {
  tracker.Observe(lane, Server("7001", 1));
  EXPECT_TRUE(tracker.Observe(lane, Server("7001", 2)));
}

TEST(FailoverTrackerTest, FirstIdentityOfEachLaneIsNotAFailover) {
  FailoverTracker tracker;
  EXPECT_FALSE(tracker.Observe(kChecks, Server("7001", 1, true)));
  EXPECT_FALSE(tracker.Observe(kLocks, Server("7001", 1)));
  EXPECT_FALSE(tracker.Observe(kChecks, Server("7001", 1, true)));
  EXPECT_EQ(tracker.count(), 0u);
}

TEST(FailoverTrackerTest, UnknownIdentityIsIgnored) {
  FailoverTracker tracker;
  EXPECT_FALSE(tracker.Observe(kLocks, Server("", 0)));
  EXPECT_FALSE(tracker.Observe(kLocks, Server("7001", 1)));
  // The role lost its privilege for a while: nothing is learnt, and the
  // lane's last identity stays.
  EXPECT_FALSE(tracker.Observe(kLocks, Server("", 0)));
  EXPECT_FALSE(tracker.Observe(kLocks, Server("7001", 1)));
  EXPECT_EQ(tracker.count(), 0u);
}

TEST(FailoverTrackerTest, PromotionSeenByBothLanesCountsOnce) {
  FailoverTracker tracker;
  tracker.Observe(kChecks, Server("7001", 1, true));
  SeeFailoverOn(tracker, kLocks);
  EXPECT_EQ(tracker.count(), 1u);
  // The checks lane kept its connection to the promoted standby.
  EXPECT_FALSE(tracker.Observe(kChecks, Server("7001", 2)));
  EXPECT_EQ(tracker.count(), 1u);
  // Each further promotion counts again.
  EXPECT_TRUE(tracker.Observe(kChecks, Server("7001", 3)));
  EXPECT_FALSE(tracker.Observe(kLocks, Server("7001", 3)));
  EXPECT_EQ(tracker.count(), 2u);
}

TEST(FailoverTrackerTest, AnotherSystemIdentifierCountsOnce) {
  FailoverTracker tracker;
  SeeBothLanesOnThePrimary(tracker);
  // A new cluster (restored, or a logical replica) on timeline 1 as well.
  EXPECT_TRUE(tracker.Observe(kLocks, Server("8002", 1)));
  EXPECT_FALSE(tracker.Observe(kChecks, Server("8002", 1)));
  EXPECT_EQ(tracker.count(), 1u);
  // Back to the old one, whose timeline is no higher than seen: not counted.
  EXPECT_FALSE(tracker.Observe(kLocks, Server("7001", 1)));
  EXPECT_EQ(tracker.count(), 1u);
}

TEST(FailoverTrackerTest, StandbyRestartpointCatchingUpIsNotCounted) {
  FailoverTracker tracker;
  SeeFailoverOn(tracker, kLocks);
  // The checks lane starts on a standby whose last restartpoint is still on
  // the old timeline, then catches up with the new one.
  EXPECT_FALSE(tracker.Observe(kChecks, Server("7001", 1, true)));
  EXPECT_FALSE(tracker.Observe(kChecks, Server("7001", 2, true)));
  EXPECT_EQ(tracker.count(), 1u);
}

TEST(FailoverTrackerTest, OlderTimelineIsWarnedAboutNotCounted) {
  FailoverTracker tracker;
  SeeFailoverOn(tracker, kLocks);
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(tracker.Observe(kLocks, Server("7001", 1)));
  std::string log = ::testing::internal::GetCapturedStderr();
  ExpectContains(log,
                 {"lane reaches a server on an older timeline than seen before: split brain?"});
  // And going forward again to a timeline counted already is not a new one.
  EXPECT_FALSE(tracker.Observe(kLocks, Server("7001", 2)));
  EXPECT_EQ(tracker.count(), 1u);
}

// The old primary still up as a primary while a lane has reached the
// promoted one: the lane that never left it is warned about, once while it
// stays there, and nothing is counted for it.
TEST(FailoverTrackerTest, LaneLeftOnTheOldPrimaryIsWarnedAboutOnce) {
  FailoverTracker tracker;
  SeeBothLanesOnThePrimary(tracker);
  EXPECT_TRUE(tracker.Observe(kChecks, Server("7001", 2)));
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(tracker.Observe(kLocks, Server("7001", 1)));
  EXPECT_FALSE(tracker.Observe(kLocks, Server("7001", 1)));
  std::string log = ::testing::internal::GetCapturedStderr();
  const std::string warning = "split brain?";
  auto first = log.find(warning);
  ASSERT_NE(first, std::string::npos) << log;
  EXPECT_EQ(log.find(warning, first + 1), std::string::npos) << log;
  ExpectContains(log, {"from=7001/2", "to=7001/1"});
  // It moves to the new primary: nothing more to say, nothing counted.
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(tracker.Observe(kLocks, Server("7001", 2)));
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(tracker.count(), 1u);
}

// A standby behind on its restartpoint's timeline is no split brain.
TEST(FailoverTrackerTest, StandbyOnAnOlderTimelineIsNotWarnedAbout) {
  FailoverTracker tracker;
  SeeFailoverOn(tracker, kLocks);
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(tracker.Observe(kChecks, Server("7001", 1, true)));
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

// After a failover a lane that read the promoted node reconnects to the old
// primary, rejoined as a standby whose last restartpoint is still on the old
// timeline: no split brain, nothing counted; and its restartpoint catching
// up later is no new failover either.
TEST(FailoverTrackerTest, LaneBackOnTheRejoinedOldPrimaryIsNotWarnedAbout) {
  FailoverTracker tracker;
  SeeFailoverOn(tracker, kChecks);
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(tracker.Observe(kChecks, Server("7001", 1, true)));
  EXPECT_FALSE(tracker.Observe(kChecks, Server("7001", 2, true)));
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(tracker.count(), 1u);
}

TEST(FailoverTrackerTest, CountedChangeIsLoggedWithBothIdentities) {
  FailoverTracker tracker;
  tracker.Observe(kLocks, Server("7001", 1));
  ::testing::internal::CaptureStderr();
  tracker.Observe(kLocks, Server("7001", 2));
  std::string log = ::testing::internal::GetCapturedStderr();
  ExpectContains(log, {"level=warn msg=\"database server changed (failover)\"", "from=7001/1",
                       "to=7001/2"});
}

// A lane that starts only after a promotion (the locks lane enabled by a
// reload) must not hide the move from the lane that saw the old primary.
TEST(FailoverTrackerTest, LateLaneOnTheNewTimelineDoesNotHideTheMove) {
  FailoverTracker tracker;
  tracker.Observe(kChecks, Server("7001", 1));
  EXPECT_FALSE(tracker.Observe(kLocks, Server("7001", 2)));
  EXPECT_TRUE(tracker.Observe(kChecks, Server("7001", 2)));
  EXPECT_EQ(tracker.count(), 1u);
}

}  // namespace
}  // namespace seatwatch::poll
