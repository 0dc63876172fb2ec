// The daemon's lanes: which check runs where, with which session settings,
// and how the lanes' states become one snapshot.
#include <gtest/gtest.h>

#include "checks/lock_check.h"
#include "checks/registry.h"
#include "http/handlers.h"
#include "metrics/snapshot_builder.h"
#include "poll/lane.h"
#include "poll/state_publisher.h"
#include "support/test_config.h"

namespace seatwatch::poll {
namespace {

using namespace std::chrono_literals;

metrics::CheckStatus Status(const std::string& name) {
  metrics::CheckStatus status;
  status.name = name;
  status.has_run = true;
  status.success = true;
  return status;
}

metrics::PollState Lane(const std::string& check, bool up, double last_success) {
  metrics::PollState state;
  state.version = "1.2.3";
  state.poll_interval_seconds = 10;
  state.checks.push_back(Status(check));
  state.database_up = up;
  state.last_poll_unix = last_success + 1;
  state.last_successful_poll_unix = last_success;
  return state;
}

TEST(PollLanesTest, OnlyTheLocksCheckGetsALaneOfItsOwn) {
  config::Config config = testing::ConfigFromToml(
      "[[metric]]\nname = \"m\"\nsql = \"queries/booking/holds.sql\"\nvalue = \"holds_active\"\n",
      "dbname=x");
  auto checks = checks::BuildChecks(config);
  ASSERT_EQ(checks.size(), 2u);
  auto locks = TakeLane(checks, Lane::kLocks);
  ASSERT_EQ(locks.size(), 1u);
  EXPECT_EQ(locks[0]->name(), "locks");
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0]->name(), "m");
  EXPECT_TRUE(TakeLane(checks, Lane::kLocks).empty());
}

TEST(PollLanesTest, LocksSessionBakesItsOwnStatementTimeout) {
  config::Config config;
  config.database.application_name = "sw";
  config.database.statement_timeout = 5s;
  config.database.lock_timeout = 100ms;
  config.locks.statement_timeout = 1s;
  db::SessionSettings checks = LaneSessionSettings(config, Lane::kChecks);
  db::SessionSettings locks = LaneSessionSettings(config, Lane::kLocks);
  EXPECT_EQ(checks.application_name, "sw");
  EXPECT_EQ(checks.statement_timeout, 5s);
  EXPECT_EQ(locks.application_name, "sw-locks");
  EXPECT_EQ(locks.statement_timeout, 1s);
  EXPECT_EQ(locks.lock_timeout, 100ms);
  EXPECT_TRUE(checks.read_only);
  EXPECT_TRUE(locks.read_only);
}

TEST(PollLanesTest, MergeKeepsEveryLanesChecksInLaneOrder) {
  metrics::PollState merged = MergeLanes({Lane("inventory", true, 900), Lane("locks", true, 998)});
  ASSERT_EQ(merged.checks.size(), 2u);
  EXPECT_EQ(merged.checks[0].name, "inventory");
  EXPECT_EQ(merged.checks[1].name, "locks");
  EXPECT_EQ(merged.version, "1.2.3");
  EXPECT_EQ(merged.poll_interval_seconds, 10);
  EXPECT_TRUE(merged.database_up);
  EXPECT_EQ(merged.last_successful_poll_unix, 998);
  EXPECT_EQ(merged.last_poll_unix, 999);
}

TEST(PollLanesTest, UpOnlyWhileEveryLaneWithChecksReachesTheDatabase) {
  EXPECT_FALSE(MergeLanes({Lane("inventory", false, 900), Lane("locks", true, 998)}).database_up);
  EXPECT_FALSE(MergeLanes({Lane("inventory", true, 900), Lane("locks", false, 998)}).database_up);
  // The locks lane with [locks] disabled has no checks and does not count.
  metrics::PollState idle;
  EXPECT_TRUE(MergeLanes({Lane("inventory", true, 900), idle}).database_up);
  EXPECT_FALSE(MergeLanes({metrics::PollState{}, metrics::PollState{}}).database_up);
}

// A minute-long poll in the checks lane keeps its last success old; the
// locks lane keeps the snapshot ready.
TEST(PollLanesTest, ReadyWhileOneLaneIsInALongPoll) {
  metrics::PollState merged = MergeLanes({Lane("inventory", true, 900), Lane("locks", true, 998)});
  metrics::Snapshot snapshot = metrics::BuildSnapshot(merged);
  std::string why;
  EXPECT_TRUE(http::IsReady(snapshot, 1000, &why)) << why;
  EXPECT_NE(snapshot.MetricsText().find("seatwatch_check_success{check=\"inventory\"} 1"),
            std::string::npos);
  EXPECT_NE(snapshot.MetricsText().find("seatwatch_check_success{check=\"locks\"} 1"),
            std::string::npos);
}

TEST(PollLanesTest, PublisherServesTheLastStateOfEveryLane) {
  metrics::SnapshotStore store;
  StatePublisher publisher(store, 2);
  publisher.Publish(0, Lane("inventory", true, 900));
  publisher.Publish(1, Lane("locks", true, 998));
  publisher.Publish(1, Lane("locks", true, 1000));
  auto snapshot = store.Current();
  EXPECT_NE(snapshot->MetricsText().find("check=\"inventory\""), std::string::npos);
  EXPECT_NE(snapshot->MetricsText().find("check=\"locks\""), std::string::npos);
  EXPECT_EQ(snapshot->last_successful_poll_unix, 1000);
  EXPECT_TRUE(snapshot->database_up);
}

}  // namespace
}  // namespace seatwatch::poll
