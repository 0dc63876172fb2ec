// Whether a lane reads a standby is logged once per change, not per poll.
#include "poll/recovery_watch.h"

#include <gtest/gtest.h>

namespace seatwatch::poll {
namespace {

using Change = RecoveryWatch::Change;

TEST(RecoveryWatchTest, FirstPollOnAPrimarySaysNothing) {
  RecoveryWatch watch;
  EXPECT_FALSE(watch.in_recovery().has_value());
  EXPECT_EQ(watch.Observe(false, "locks", "host=a"), Change::kNone);
  EXPECT_EQ(watch.in_recovery(), false);
}

TEST(RecoveryWatchTest, StandbyThenPromotionLoggedOnceEach) {
  RecoveryWatch watch;
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(watch.Observe(true, "checks", "host=b password=****"), Change::kToStandby);
  EXPECT_EQ(watch.Observe(true, "checks", "host=b password=****"), Change::kNone);
  EXPECT_EQ(watch.Observe(false, "checks", "host=b password=****"), Change::kToPrimary);
  EXPECT_EQ(watch.Observe(false, "checks", "host=b password=****"), Change::kNone);
  EXPECT_EQ(watch.Observe(true, "checks", "host=b password=****"), Change::kToStandby);
  std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("level=info msg=\"lane reads a standby (in recovery)\" lane=checks "
                     "dsn=\"host=b password=****\""),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("level=info msg=\"lane reads a primary now\" lane=checks"), std::string::npos)
      << log;
  std::size_t lines = 0;
  for (char c : log) lines += c == '\n';
  EXPECT_EQ(lines, 3u) << log;
}

}  // namespace
}  // namespace seatwatch::poll
