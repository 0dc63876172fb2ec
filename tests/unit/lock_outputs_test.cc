// What one lock poll exports: metric families, the /api/locks document and
// the --once text, from hand-made rows.
#include <gtest/gtest.h>

#include "locks/hot_row.h"
#include "locks/lock_metrics.h"
#include "locks/locks_json.h"
#include "locks/locks_report.h"
#include "metrics/snapshot_builder.h"
#include "support/lock_rows.h"

namespace seatwatch::locks {
namespace {

SessionRow Session(int pid, const std::string& state, bool waiting) {
  SessionRow session = testing::ClientSession(pid, state, 30, 20);
  session.wait_event_type = waiting ? "Lock" : "Client";
  session.wait_event = waiting ? "transactionid" : "ClientRead";
  session.application_name = "app" + std::to_string(pid);
  session.query = "UPDATE seats SET status = 'held' WHERE seat = 'A12'";
  return session;
}

using testing::LockWait;

// R (pid 10) idle in transaction holds seat A12; 11 waits for its
// transaction, 12 and 13 queue for the row.
LockPoll HotSeatPoll(bool show_query = true) {
  LockPoll poll;
  poll.sessions[10] = Session(10, "idle in transaction", false);
  for (int pid : {11, 12, 13}) poll.sessions[pid] = Session(pid, "active", true);
  if (!show_query) {
    for (auto& [pid, session] : poll.sessions) session.query.reset();
  }
  poll.waits[11] = LockWait(11, "transactionid", {10}, 7.5);
  poll.waits[12] = LockWait(12, "tuple", {11}, 6);
  poll.waits[13] = LockWait(13, "tuple", {11, 12}, 2);
  poll.forest = BuildForest(ToWaiters(poll.waits), {10, 11, 12, 13});
  poll.rows[poll.forest.rows.at(0).target] = "seats(event_id=1, seat=A12)";
  poll.watched_relations = {"seats"};
  poll.states = {{std::string("active"), 3, 30.0}, {std::string("idle in transaction"), 1, 30.0},
                 {std::string("idle"), 40, std::nullopt}};
  poll.counters = {4, 17};
  poll.wait_start_source = "waitstart";
  return poll;
}

std::string Render(const LockPoll& poll, const WaitEpisodes& episodes) {
  return metrics::RenderText(BuildLockFamilies(poll, episodes));
}

bool Has(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}

TEST(LockOutputsTest, MetricsOfAHotSeat) {
  WaitEpisodes episodes(5, LockWaitBuckets());
  std::string text = Render(HotSeatPoll(), episodes);
  EXPECT_TRUE(Has(text, "seatwatch_lock_waiting_sessions 3")) << text;
  EXPECT_TRUE(Has(text, "seatwatch_lock_wait_max_seconds 7.5")) << text;
  EXPECT_TRUE(Has(text, "seatwatch_lock_blocking_roots{state=\"idle in transaction\"} 1")) << text;
  EXPECT_TRUE(Has(text, "seatwatch_lock_blocking_roots{state=\"active\"} 0")) << text;
  EXPECT_TRUE(Has(text, "seatwatch_lock_chain_max_depth 1")) << text;
  EXPECT_TRUE(Has(text, "seatwatch_lock_max_blocked_by_one_root 3")) << text;
  EXPECT_TRUE(Has(text, "seatwatch_lock_hot_row_waiters 3")) << text;
  // The head waits on a transaction but counts under the row's relation.
  EXPECT_TRUE(Has(text, "seatwatch_lock_waiting_by_relation{relation=\"seats\"} 3")) << text;
  EXPECT_TRUE(Has(text, "seatwatch_sessions{state=\"active\"} 3")) << text;
  EXPECT_TRUE(Has(text, "seatwatch_sessions{state=\"idle\"} 40")) << text;
  EXPECT_TRUE(Has(text, "seatwatch_sessions{state=\"idle in transaction (aborted)\"} 0")) << text;
  EXPECT_TRUE(Has(text, "seatwatch_transaction_oldest_seconds{state=\"idle in transaction\"} 30"))
      << text;
  EXPECT_TRUE(Has(text, "seatwatch_deadlocks_total 4")) << text;
  EXPECT_TRUE(Has(text, "seatwatch_xact_rollbacks_total 17")) << text;
  EXPECT_NE(text.find("# TYPE seatwatch_lock_wait_duration_seconds histogram"), std::string::npos);
  EXPECT_NE(text.find("40001"), std::string::npos) << "rollback HELP must explain 40001";
  // No pid, query or row key in any label.
  EXPECT_EQ(text.find("A12"), std::string::npos) << text;
  EXPECT_EQ(text.find("pid="), std::string::npos) << text;
}

TEST(LockOutputsTest, NothingWaitingStillExportsZeros) {
  LockPoll poll;
  poll.watched_relations = {"seats"};
  WaitEpisodes episodes(5, LockWaitBuckets());
  std::string text = Render(poll, episodes);
  for (const char* line :
       {"seatwatch_lock_waiting_sessions 0", "seatwatch_lock_wait_max_seconds 0",
        "seatwatch_lock_chain_max_depth 0", "seatwatch_lock_max_blocked_by_one_root 0",
        "seatwatch_lock_hot_row_waiters 0", "seatwatch_lock_waits_total 0",
        "seatwatch_lock_wait_duration_seconds_count 0",
        "seatwatch_lock_blocking_roots{state=\"active\"} 0",
        "seatwatch_lock_blocking_roots{state=\"idle in transaction\"} 0",
        "seatwatch_lock_waiting_by_relation{relation=\"seats\"} 0",
        "seatwatch_transaction_oldest_seconds{state=\"active\"} 0"}) {
    EXPECT_TRUE(Has(text, line)) << line << "\n" << text;
  }
}

TEST(LockOutputsTest, JsonNamesTheRootTheWaitersAndTheRow) {
  std::string json = LocksJson(HotSeatPoll());
  for (const char* part :
       {"\"waiting_sessions\":3", "\"chain_max_depth\":1", "\"wait_start_source\":\"waitstart\"",
        "\"roots\":[{\"pid\":10,\"state\":\"idle in transaction\",\"application_name\":\"app10\"",
        "\"blocked_directly\":3,\"blocked_total\":3", "\"hot_row\":\"seats(event_id=1, seat=A12)\"",
        "\"locktype\":\"tuple\",\"mode\":\"ExclusiveLock\",\"relation\":\"seats\"",
        "\"wait_seconds\":7.5", "\"query\":\"UPDATE seats", "\"hot_rows\":[{\"row\":",
        "\"cycles\":[]", "\"unattributed\":[]"}) {
    EXPECT_NE(json.find(part), std::string::npos) << part << "\n" << json;
  }
}

TEST(LockOutputsTest, JsonOmitsQueriesWhenHidden) {
  std::string json = LocksJson(HotSeatPoll(false));
  EXPECT_EQ(json.find("\"query\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"pid\":10"), std::string::npos) << json;
}

TEST(LockOutputsTest, ReportDrawsTheForest) {
  std::string report = LocksReport(HotSeatPoll());
  EXPECT_NE(report.find("3 waiting, longest 7.5s, deepest chain 1"), std::string::npos) << report;
  EXPECT_NE(report.find("  root pid 10 idle in transaction"), std::string::npos) << report;
  EXPECT_NE(report.find("holds up 3 (3 directly)"), std::string::npos) << report;
  EXPECT_NE(report.find("    pid 12 waits 6.0s tuple ExclusiveLock on seats "
                        "seats(event_id=1, seat=A12) (app12 booking@local)\n"),
            std::string::npos)
      << report;
  EXPECT_NE(LocksReport(LockPoll{}).find("no session waits"), std::string::npos);
}

TEST(LockOutputsTest, RowKeyFormatting) {
  EXPECT_EQ(FormatRowKey("seats", {{"event_id", "event_id"}, {"seat", "seat"}},
                         {std::string("1"), std::string("A12")}),
            "seats(event_id=1, seat=A12)");
  EXPECT_EQ(FormatRowKey("t", {{"k", "k"}}, {std::nullopt}), "t(k=NULL)");
  EXPECT_EQ(FormatRowCtid("seats", 4, 2), "seats(ctid=(4,2))");
}

TEST(LockOutputsTest, WaitStartFallbackUsesStateChange) {
  std::map<int, SessionRow> sessions{{11, Session(11, "active", true)}};
  sessions[11].state_change_us = 123;
  std::map<int, LockWaitRow> waits{{11, LockWait(11, "transactionid", {10}, 0)}};
  waits[11].wait_seconds.reset();
  waits[11].wait_start_us.reset();
  auto on14 = waits;
  ApplyWaitStartFallback(on14, sessions, true);
  EXPECT_DOUBLE_EQ(*on14[11].wait_seconds, 20);
  EXPECT_FALSE(on14[11].wait_start_us.has_value());
  ApplyWaitStartFallback(waits, sessions, false);
  EXPECT_EQ(waits[11].wait_start_us, 123);
}

TEST(LockOutputsTest, SessionsPerStateComeFromTheServersCount) {
  LockPoll poll;
  poll.states = {{std::nullopt, 2, std::nullopt}, {std::string("idle in transaction"), 5, -0.001}};
  std::string text = Render(poll, WaitEpisodes(5, LockWaitBuckets()));
  EXPECT_TRUE(Has(text, "seatwatch_sessions{state=\"unknown\"} 2")) << text;
  EXPECT_TRUE(Has(text, "seatwatch_sessions{state=\"idle in transaction\"} 5")) << text;
  EXPECT_TRUE(Has(text, "seatwatch_sessions{state=\"active\"} 0")) << text;
  EXPECT_TRUE(Has(text, "seatwatch_transaction_oldest_seconds{state=\"idle in transaction\"} 0"))
      << text;
}

// The rows of one read as the statement returns them: R (10) idle in
// transaction, 11 waiting for its transaction, 12 and 13 queued for the row,
// 13 also reported behind 99, which ended before the read.
LockPollRows HotSeatRows() {
  LockPollRows rows;
  rows.sessions = {Session(10, "idle in transaction", false), Session(11, "active", true),
                   Session(12, "active", true), Session(13, "active", true)};
  rows.waits = {LockWait(11, "transactionid", {10}, 7.5), LockWait(12, "tuple", {11}, 6),
                LockWait(13, "tuple", {11, 12, 99}, 2)};
  rows.states = {{std::string("active"), 3, 30.0}};
  rows.counters = {4, 17};
  return rows;
}

TEST(LockOutputsTest, AssembleBuildsTheForestFromOneRead) {
  LockPoll poll = AssembleLockPoll(HotSeatRows(), true);
  EXPECT_EQ(poll.wait_start_source, "waitstart");
  EXPECT_EQ(poll.sessions.size(), 4u);
  EXPECT_EQ(poll.waits.size(), 3u);
  EXPECT_EQ(poll.forest.roots, std::vector<int>{10});
  EXPECT_EQ(poll.forest.nodes.count(99), 0u) << "a blocker that ended is dropped";
  EXPECT_EQ(poll.forest.max_blocked_by_one_root, 3);
  EXPECT_EQ(poll.forest.hot_row_waiters, 3);
  EXPECT_EQ(poll.StateOf(10), "idle in transaction");
  ASSERT_EQ(poll.states.size(), 1u);
  EXPECT_EQ(poll.counters.xact_rollback, 17);
  EXPECT_DOUBLE_EQ(poll.WaitSeconds(11), 7.5);
}

TEST(LockOutputsTest, AssembleFallsBackToStateChangeBefore14) {
  LockPollRows rows = HotSeatRows();
  for (auto& wait : rows.waits) {
    wait.wait_seconds.reset();
    wait.wait_start_us.reset();
  }
  rows.sessions[1].state_change_us = 555;
  LockPoll poll = AssembleLockPoll(std::move(rows), false);
  EXPECT_EQ(poll.wait_start_source, "state_change");
  EXPECT_DOUBLE_EQ(poll.WaitSeconds(11), 20);
  EXPECT_EQ(poll.Wait(11)->wait_start_us, 555);
}

TEST(LockOutputsTest, AssembleWithNobodyWaitingHasAnEmptyForest) {
  LockPollRows rows;
  rows.states = {{std::string("idle"), 190, std::nullopt}};
  LockPoll poll = AssembleLockPoll(std::move(rows), true);
  EXPECT_TRUE(poll.forest.nodes.empty());
  EXPECT_TRUE(poll.sessions.empty());
  EXPECT_TRUE(Has(Render(poll, WaitEpisodes(5, LockWaitBuckets())),
                  "seatwatch_sessions{state=\"idle\"} 190"));
}

}  // namespace
}  // namespace seatwatch::locks
