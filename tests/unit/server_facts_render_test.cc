// The servers the lanes read, as /metrics, /api/invariants and the
// publisher show them: one series per lane that read its server's facts,
// the failover counter always, nothing stale from an overdue lane.
#include <gtest/gtest.h>

#include <string>

#include "metrics/snapshot.h"
#include "metrics/snapshot_builder.h"
#include "poll/state_publisher.h"

namespace seatwatch {
namespace {

metrics::LaneServer Server(const std::string& lane, bool in_recovery, double lag,
                           std::uint32_t timeline) {
  metrics::LaneServer server;
  server.lane = lane;
  server.facts.in_recovery = in_recovery;
  server.facts.replica_lag_seconds = lag;
  server.facts.system_identifier = "7301234567890123456";
  server.facts.timeline = timeline;
  return server;
}

metrics::PollState LaneState(const std::string& check, std::vector<metrics::LaneServer> servers) {
  metrics::PollState state;
  state.database_up = true;
  metrics::CheckStatus status;
  status.name = check;
  status.has_run = true;
  status.success = true;
  state.checks.push_back(status);
  state.servers = std::move(servers);
  return state;
}

// The HELP, TYPE and sample lines of the family `family` in `text`.
std::string Lines(const std::string& text, const std::string& family) {
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    std::string line = text.substr(start, end - start);
    start = end == std::string::npos ? text.size() : end + 1;
    bool sample = line.rfind(family, 0) == 0 &&
                  (line.size() == family.size() || line[family.size()] == '{' ||
                   line[family.size()] == ' ');
    bool comment = line.rfind("# HELP " + family + " ", 0) == 0 ||
                   line.rfind("# TYPE " + family + " ", 0) == 0;
    if (sample || comment) out += line + "\n";
  }
  return out;
}

std::string Text(const metrics::PollState& state) {
  return metrics::RenderText(metrics::BuildFamilies(state));
}

constexpr const char* kRecoveryHelp =
    "# HELP seatwatch_database_in_recovery 1 while the lane reads a standby "
    "(pg_is_in_recovery()), 0 on a primary.\n"
    "# TYPE seatwatch_database_in_recovery gauge\n";
constexpr const char* kLagHelp =
    "# HELP seatwatch_replica_lag_seconds How late what the lane reads may be, in seconds: 0 on "
    "a primary and on a standby that has replayed all it received, else the age of the last "
    "replayed transaction.\n"
    "# TYPE seatwatch_replica_lag_seconds gauge\n";
constexpr const char* kTimelineHelp =
    "# HELP seatwatch_database_timeline The timeline of the server the lane reads (0: unknown); "
    "a promotion raises it.\n"
    "# TYPE seatwatch_database_timeline gauge\n";
constexpr const char* kFailoversHelp =
    "# HELP seatwatch_database_failovers_total Times a lane found the database on another "
    "server than before (another system identifier, or a higher timeline), once per change.\n"
    "# TYPE seatwatch_database_failovers_total counter\n";

TEST(ServerFactsRenderTest, NoServerNoSeriesButTheFailoverCounter) {
  std::string text = Text(LaneState("a", {}));
  EXPECT_EQ(Lines(text, "seatwatch_database_in_recovery"), "");
  EXPECT_EQ(Lines(text, "seatwatch_replica_lag_seconds"), "");
  EXPECT_EQ(Lines(text, "seatwatch_database_timeline"), "");
  EXPECT_EQ(Lines(text, "seatwatch_database_failovers_total"),
            std::string(kFailoversHelp) + "seatwatch_database_failovers_total 0\n");
}

TEST(ServerFactsRenderTest, OneLaneOnAStandby) {
  std::string text = Text(LaneState("a", {Server("checks", true, 1.5, 3)}));
  EXPECT_EQ(Lines(text, "seatwatch_database_in_recovery"),
            std::string(kRecoveryHelp) + "seatwatch_database_in_recovery{lane=\"checks\"} 1\n");
  EXPECT_EQ(Lines(text, "seatwatch_replica_lag_seconds"),
            std::string(kLagHelp) + "seatwatch_replica_lag_seconds{lane=\"checks\"} 1.5\n");
  EXPECT_EQ(Lines(text, "seatwatch_database_timeline"),
            std::string(kTimelineHelp) + "seatwatch_database_timeline{lane=\"checks\"} 3\n");
}

TEST(ServerFactsRenderTest, TwoLanesAndTheFailoverCount) {
  metrics::PollState state = poll::MergeLanes({LaneState("a", {Server("checks", true, 0.25, 2)}),
                                               LaneState("locks", {Server("locks", false, 0, 2)})});
  state.failovers_total = 1;
  std::string text = Text(state);
  EXPECT_EQ(Lines(text, "seatwatch_database_in_recovery"),
            std::string(kRecoveryHelp) + "seatwatch_database_in_recovery{lane=\"checks\"} 1\n" +
                "seatwatch_database_in_recovery{lane=\"locks\"} 0\n");
  EXPECT_EQ(Lines(text, "seatwatch_replica_lag_seconds"),
            std::string(kLagHelp) + "seatwatch_replica_lag_seconds{lane=\"checks\"} 0.25\n" +
                "seatwatch_replica_lag_seconds{lane=\"locks\"} 0\n");
  EXPECT_EQ(Lines(text, "seatwatch_database_timeline"),
            std::string(kTimelineHelp) + "seatwatch_database_timeline{lane=\"checks\"} 2\n" +
                "seatwatch_database_timeline{lane=\"locks\"} 2\n");
  EXPECT_EQ(Lines(text, "seatwatch_database_failovers_total"),
            std::string(kFailoversHelp) + "seatwatch_database_failovers_total 1\n");
}

TEST(ServerFactsRenderTest, MergeKeepsLaneOrder) {
  metrics::PollState merged =
      poll::MergeLanes({LaneState("a", {Server("checks", true, 0, 1)}), LaneState("b", {}),
                        LaneState("locks", {Server("locks", false, 0, 1)})});
  ASSERT_EQ(merged.servers.size(), 2u);
  EXPECT_EQ(merged.servers[0].lane, "checks");
  EXPECT_EQ(merged.servers[1].lane, "locks");
  EXPECT_EQ(merged.failovers_total, 0u) << "the publisher's tracker sets it";
}

TEST(ServerFactsRenderTest, OverdueLaneLosesItsServer) {
  metrics::PollState state = LaneState("a", {Server("checks", false, 0, 1)});
  poll::MarkOverdue(state);
  EXPECT_TRUE(state.servers.empty());
  EXPECT_EQ(Lines(Text(state), "seatwatch_database_in_recovery"), "");
}

TEST(ServerFactsRenderTest, JsonNamesEachServerNextToDatabaseUp) {
  metrics::PollState state = LaneState("a", {Server("checks", true, 0.5, 2)});
  state.failovers_total = 3;
  std::string json = metrics::InvariantsJson(state);
  EXPECT_NE(json.find(R"({"database_up":true,"servers":[{"lane":"checks","in_recovery":true,)"
                      R"("replica_lag_seconds":0.5,"system_identifier":"7301234567890123456",)"
                      R"("timeline":2}],"failovers_total":3,)"),
            std::string::npos)
      << json;
  std::string empty = metrics::InvariantsJson(LaneState("a", {}));
  EXPECT_NE(empty.find(R"("servers":[],"failovers_total":0,)"), std::string::npos) << empty;
}

// The publisher feeds every lane's servers to one tracker: a promotion seen
// by both lanes is one failover on the merged state.
TEST(ServerFactsRenderTest, PublisherCountsAPromotionOnce) {
  metrics::SnapshotStore store;
  poll::StatePublisher publisher(store, 2);
  publisher.Publish(0, LaneState("a", {Server("checks", true, 0, 1)}));
  publisher.Publish(1, LaneState("locks", {Server("locks", false, 0, 1)}));
  EXPECT_EQ(store.Current()->state->failovers_total, 0u);
  publisher.Publish(1, LaneState("locks", {Server("locks", false, 0, 2)}));
  publisher.Publish(0, LaneState("a", {Server("checks", false, 0, 2)}));
  EXPECT_EQ(store.Current()->state->failovers_total, 1u);
  EXPECT_NE(store.Current()->MetricsText().find("seatwatch_database_failovers_total 1\n"),
            std::string::npos);
  publisher.MarkOverdue(0);
  EXPECT_EQ(store.Current()->state->failovers_total, 1u) << "a counter never goes back";
  EXPECT_EQ(store.Current()->state->servers.size(), 1u);
}

}  // namespace
}  // namespace seatwatch
