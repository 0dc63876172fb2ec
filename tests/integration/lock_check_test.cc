// The locks check against a real PostgreSQL with real sessions: a hot seat
// queue behind an idle-in-transaction holder, a chain, a deadlock, and the
// promise that a poll without waiters never calls pg_blocking_pids().
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <thread>

#include <pqxx/connection>
#include <pqxx/result>
#include <pqxx/transaction>

#include "checks/lock_check.h"
#include "locks/lock_wait_reader.h"
#include "db/query_cache.h"
#include "metrics/snapshot_builder.h"
#include "support/async_session.h"
#include "support/daemon_process.h"
#include "support/daemon_test.h"
#include "support/http_client.h"
#include "support/scratch_db.h"
#include "support/test_env.h"

namespace seatwatch {
namespace {

using namespace std::chrono_literals;
using testing::AsyncSession;
using testing::Sample;
using testing::ScratchDatabase;
using testing::WaitFor;

const char* kClaimA12 =
    "UPDATE seats SET status = 'held', holder = 'fan', "
    "hold_expires_at = now() + interval '10 minutes', version = version + 1 "
    "WHERE event_id = 1 AND seat = 'A12' "
    "AND (status = 'free' OR (status = 'held' AND hold_expires_at <= now()))";

std::string Claim(const std::string& seat) {
  std::string sql = kClaimA12;
  return sql.replace(sql.find("'A12'"), 5, "'" + seat + "'");
}

class LockCheckTest : public ::testing::Test {
 protected:
  explicit LockCheckTest(const std::string& name = "sw_locks") : db_(name) {
    db_.Exec("INSERT INTO seats (event_id, seat) VALUES (1, 'A12'), (1, 'A13'), (1, 'B1'), "
             "(1, 'B2')");
    monitor_ = db_.Connect();
    config_.resolve_rows = {"seats"};
    config_.log_threshold = 1h;
  }

  // One run of the check, as the poller does it: its own short read-only
  // transaction.
  metrics::CheckOutput Poll(checks::LockCheck& check) {
    pqxx::transaction<pqxx::read_committed, pqxx::read_only> tx(*monitor_);
    tx.exec0("SET LOCAL statement_timeout = 1000; SET LOCAL lock_timeout = 100");
    db::QueryCache cache;
    db::LazyTransaction lazy(tx);
    checks::CheckContext context{lazy, cache, std::chrono::system_clock::now()};
    metrics::CheckOutput output = check.Run(context);
    tx.commit();
    return output;
  }

  static std::string Text(const metrics::CheckOutput& output) {
    return metrics::RenderText(output.families);
  }

  int LockWaiters() {
    return std::stoi(db_.Scalar("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = "
                                "'Lock' AND datname = current_database()"));
  }

  void AwaitWaiters(int count) {
    ASSERT_TRUE(WaitFor([&] { return LockWaiters() == count; }, 10s))
        << "expected " << count << " waiting sessions, have " << LockWaiters();
  }

  ScratchDatabase db_;
  std::unique_ptr<pqxx::connection> monitor_;
  config::LocksConfig config_;
};

TEST_F(LockCheckTest, IdleHolderOfAHotSeatHoldsUpThreeAtDepthOne) {
  checks::LockCheck check(config_);
  std::string before = Text(Poll(check));
  EXPECT_EQ(Sample(before, "seatwatch_lock_waiting_sessions"), 0);
  EXPECT_EQ(Sample(before, "seatwatch_lock_chain_max_depth"), 0);
  EXPECT_EQ(Sample(before, "seatwatch_lock_waits_total"), 0);

  AsyncSession holder(db_.dsn(), "holder");
  ASSERT_EQ(holder.Run(std::string("BEGIN; ") + kClaimA12), "");
  std::vector<std::unique_ptr<AsyncSession>> claims;
  for (int i = 0; i < 3; ++i) {
    claims.push_back(std::make_unique<AsyncSession>(db_.dsn(), "claim" + std::to_string(i)));
    claims.back()->Send(kClaimA12);
    AwaitWaiters(i + 1);
  }

  metrics::CheckOutput first = Poll(check);
  std::string text = Text(first);
  EXPECT_EQ(Sample(text, "seatwatch_lock_waiting_sessions"), 3) << text;
  EXPECT_EQ(Sample(text, "seatwatch_lock_blocking_roots{state=\"idle in transaction\"}"), 1)
      << text;
  EXPECT_EQ(Sample(text, "seatwatch_lock_blocking_roots{state=\"active\"}"), 0) << text;
  EXPECT_EQ(Sample(text, "seatwatch_lock_chain_max_depth"), 1) << text;
  EXPECT_EQ(Sample(text, "seatwatch_lock_max_blocked_by_one_root"), 3) << text;
  EXPECT_EQ(Sample(text, "seatwatch_lock_hot_row_waiters"), 3) << text;
  EXPECT_EQ(Sample(text, "seatwatch_lock_waiting_by_relation{relation=\"seats\"}"), 3) << text;
  EXPECT_EQ(Sample(text, "seatwatch_lock_waits_total"), 3) << text;
  EXPECT_EQ(Sample(text, "seatwatch_sessions{state=\"idle in transaction\"}"), 1) << text;
  EXPECT_GT(Sample(text, "seatwatch_transaction_oldest_seconds{state=\"idle in transaction\"}"), 0);

  const locks::LockPoll& poll = check.last_poll();
  EXPECT_EQ(poll.wait_start_source, "waitstart");
  ASSERT_EQ(poll.forest.roots, std::vector<int>{holder.pid()});
  for (const auto& claim : claims) {
    EXPECT_EQ(poll.forest.nodes.at(claim->pid()).parent, holder.pid());
    EXPECT_EQ(poll.HotRowOf(claim->pid()), "seats(event_id=1, seat=A12)") << claim->pid();
  }

  const std::string& json = first.documents.at("locks");
  EXPECT_NE(json.find("\"roots\":[{\"pid\":" + std::to_string(holder.pid()) +
                      ",\"state\":\"idle in transaction\",\"application_name\":\"holder\""),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"hot_row\":\"seats(event_id=1, seat=A12)\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"blocked_directly\":3,\"blocked_total\":3"), std::string::npos) << json;
  EXPECT_NE(json.find("\"query\":\"BEGIN; UPDATE seats"), std::string::npos) << json;
  EXPECT_NE(first.report.find("root pid " + std::to_string(holder.pid())), std::string::npos)
      << first.report;

  // Waits grow between polls, and are still the same three episodes.
  double longest = Sample(text, "seatwatch_lock_wait_max_seconds");
  std::map<int, double> waited;
  for (const auto& [pid, wait] : poll.waits) waited[pid] = *wait.wait_seconds;
  std::this_thread::sleep_for(1200ms);
  std::string later = Text(Poll(check));
  EXPECT_GT(Sample(later, "seatwatch_lock_wait_max_seconds"), longest + 1.0) << later;
  for (const auto& [pid, seconds] : waited) {
    EXPECT_GT(*check.last_poll().waits.at(pid).wait_seconds, seconds + 1.0) << pid;
  }
  EXPECT_EQ(Sample(later, "seatwatch_lock_waits_total"), 3);
  EXPECT_EQ(Sample(later, "seatwatch_lock_wait_duration_seconds_count"), 0);

  // The holder commits: the claims finish (the seat is taken), waits end.
  ASSERT_EQ(holder.Run("COMMIT"), "");
  for (auto& claim : claims) EXPECT_EQ(claim->Finish(), "");
  std::string after = Text(Poll(check));
  EXPECT_EQ(Sample(after, "seatwatch_lock_waiting_sessions"), 0) << after;
  EXPECT_EQ(Sample(after, "seatwatch_lock_waits_total"), 3) << after;
  EXPECT_EQ(Sample(after, "seatwatch_lock_wait_duration_seconds_count"), 3) << after;
  EXPECT_GT(Sample(after, "seatwatch_lock_wait_duration_seconds_sum"), 3 * 1.0) << after;
  EXPECT_EQ(Sample(after, "seatwatch_lock_blocking_roots{state=\"idle in transaction\"}"), 0);
}

TEST_F(LockCheckTest, ChainOverTwoRowsHasDepthTwo) {
  checks::LockCheck check(config_);
  AsyncSession a(db_.dsn(), "a");
  AsyncSession b(db_.dsn(), "b");
  AsyncSession c(db_.dsn(), "c");
  ASSERT_EQ(a.Run("BEGIN; " + Claim("B1")), "");
  // B holds B2 and waits for A's B1; C waits for B's B2.
  b.Send("BEGIN; " + Claim("B2") + "; " + Claim("B1"));
  AwaitWaiters(1);
  c.Send(Claim("B2"));
  AwaitWaiters(2);

  std::string text = Text(Poll(check));
  EXPECT_EQ(Sample(text, "seatwatch_lock_chain_max_depth"), 2) << text;
  EXPECT_EQ(Sample(text, "seatwatch_lock_max_blocked_by_one_root"), 2) << text;
  EXPECT_EQ(Sample(text, "seatwatch_lock_blocking_roots{state=\"idle in transaction\"}"), 1);
  const locks::LockPoll& poll = check.last_poll();
  EXPECT_EQ(poll.forest.roots, std::vector<int>{a.pid()});
  EXPECT_EQ(poll.forest.nodes.at(c.pid()).parent, b.pid());
  EXPECT_EQ(poll.forest.nodes.at(c.pid()).depth, 2);

  ASSERT_EQ(a.Run("ROLLBACK"), "");
  EXPECT_EQ(b.Finish(), "");
  ASSERT_EQ(b.Run("ROLLBACK"), "");
  EXPECT_EQ(c.Finish(), "");
}

TEST_F(LockCheckTest, DeadlockIsCounted) {
  checks::LockCheck check(config_);
  double before = Sample(Text(Poll(check)), "seatwatch_deadlocks_total");
  ASSERT_FALSE(std::isnan(before));
  std::string aborted;
  {
    AsyncSession x(db_.dsn(), "x");
    AsyncSession y(db_.dsn(), "y");
    ASSERT_EQ(x.Run("BEGIN; " + Claim("B1")), "");
    ASSERT_EQ(y.Run("BEGIN; " + Claim("B2")), "");
    x.Send(Claim("B2"));
    AwaitWaiters(1);
    y.Send(Claim("B1"));
    std::string x_state = x.Finish();
    std::string y_state = y.Finish();
    aborted = x_state.empty() ? y_state : x_state;
    EXPECT_TRUE(x_state.empty() != y_state.empty()) << x_state << " / " << y_state;
    x.Run("ROLLBACK");
    y.Run("ROLLBACK");
  }
  EXPECT_EQ(aborted, "40P01");
  // The server publishes the count once the detecting backend flushes its
  // statistics (at idle or exit, within about a second in PostgreSQL 15).
  double after = before;
  EXPECT_TRUE(WaitFor([&] {
    after = Sample(Text(Poll(check)), "seatwatch_deadlocks_total");
    return after > before;
  }, 15s)) << "deadlocks_total stayed at " << before;
  EXPECT_EQ(after, before + 1);
}

// pg_blocking_pids() takes every lock-manager partition lock: a poll that
// finds nobody waiting must not call it. The lock read is one statement, so
// the proof is its plan: the scan of pg_locks (whose rows alone feed
// pg_blocking_pids()) never runs without waiters. The control half proves it
// runs with one, so this test can fail.
TEST_F(LockCheckTest, NoWaitersMeansNoBlockingPidsCall) {
  checks::LockCheck check(config_);
  db_.Exec("SELECT pg_stat_statements_reset()");
  for (int i = 0; i < 3; ++i) Poll(check);
  EXPECT_EQ(std::stol(db_.Scalar(
                "SELECT coalesce(sum(s.calls), 0) FROM pg_stat_statements AS s "
                "JOIN pg_database AS d ON d.oid = s.dbid "
                "WHERE d.datname = current_database() AND s.query LIKE '%pg_stat_activity%' "
                "AND s.query NOT LIKE '%pg_stat_statements%'")),
            3)
      << "one read per poll";

  bool has_waitstart = monitor_->server_version() >= 140000;
  auto lock_scan = [&] {
    pqxx::transaction<pqxx::read_committed, pqxx::read_only> tx(*monitor_);
    tx.exec0("PREPARE lock_poll_plan(int, bool) AS " + locks::LockPollSql(has_waitstart));
    std::string line;
    for (const auto& row :
         tx.exec("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) EXECUTE lock_poll_plan(512, true)")) {
      std::string text = row[0].c_str();
      if (text.find("pg_lock_status") != std::string::npos) line = text;
    }
    tx.exec0("DEALLOCATE lock_poll_plan");
    return line;
  };
  std::string idle = lock_scan();
  EXPECT_NE(idle.find("Function Scan on pg_lock_status"), std::string::npos) << idle;
  EXPECT_NE(idle.find("never executed"), std::string::npos) << idle;

  AsyncSession holder(db_.dsn(), "holder");
  AsyncSession waiter(db_.dsn(), "waiter");
  ASSERT_EQ(holder.Run("BEGIN; " + Claim("A13")), "");
  waiter.Send(Claim("A13"));
  AwaitWaiters(1);
  std::string busy = lock_scan();
  EXPECT_EQ(busy.find("never executed"), std::string::npos) << busy;
  EXPECT_NE(busy.find("rows=1 "), std::string::npos) << busy;
  ASSERT_EQ(holder.Run("ROLLBACK"), "");
  EXPECT_EQ(waiter.Finish(), "");
}

// Servers before 14 have no pg_locks.waitstart: the other form of the lock
// read must run and leave the wait to state_change.
TEST_F(LockCheckTest, LockReadWithoutWaitstartFallsBackToStateChange) {
  AsyncSession holder(db_.dsn(), "holder");
  AsyncSession waiter(db_.dsn(), "waiter");
  ASSERT_EQ(holder.Run("BEGIN; " + Claim("A13")), "");
  waiter.Send(Claim("A13"));
  AwaitWaiters(1);
  std::this_thread::sleep_for(300ms);
  {
    pqxx::transaction<pqxx::read_committed, pqxx::read_only> tx(*monitor_);
    locks::LockPollRows rows = locks::ReadLockPoll(tx, false, locks::QueryTextMode::kRaw, 512);
    ASSERT_EQ(rows.waits.size(), 1u);
    EXPECT_FALSE(rows.waits[0].wait_seconds.has_value());
    EXPECT_EQ(rows.waits[0].blockers, std::vector<int>{holder.pid()});
    ASSERT_EQ(rows.sessions.size(), 2u) << "the waiter and its blocker only";
    locks::LockPoll poll = locks::AssembleLockPoll(std::move(rows), false);
    EXPECT_GE(*poll.Wait(waiter.pid())->wait_seconds, 0.3);
    EXPECT_EQ(poll.Wait(waiter.pid())->wait_start_us, poll.Session(waiter.pid())->state_change_us);
    EXPECT_EQ(poll.forest.roots, std::vector<int>{holder.pid()});
    EXPECT_NE(poll.Session(holder.pid())->query.value_or("").find("UPDATE seats"),
              std::string::npos);
  }
  ASSERT_EQ(holder.Run("ROLLBACK"), "");
  EXPECT_EQ(waiter.Finish(), "");
}

TEST_F(LockCheckTest, ShowQueryNoneHidesQueryText) {
  config_.show_query = config::LocksConfig::ShowQuery::kNone;
  checks::LockCheck check(config_);
  AsyncSession holder(db_.dsn(), "holder");
  AsyncSession waiter(db_.dsn(), "waiter");
  ASSERT_EQ(holder.Run("BEGIN; " + Claim("A13")), "");
  waiter.Send(Claim("A13"));
  AwaitWaiters(1);
  metrics::CheckOutput output = Poll(check);
  const std::string& json = output.documents.at("locks");
  EXPECT_NE(json.find("\"pid\":" + std::to_string(holder.pid())), std::string::npos) << json;
  EXPECT_EQ(json.find("\"query\""), std::string::npos) << json;
  EXPECT_EQ(output.report.find("query:"), std::string::npos) << output.report;
  ASSERT_EQ(holder.Run("ROLLBACK"), "");
  EXPECT_EQ(waiter.Finish(), "");
}

// Through the built daemon: the check is on by default, /api/locks serves the
// forest, /metrics the families, and one log line per long wait names the
// root.
TEST_F(LockCheckTest, DaemonServesTheForestAndLogsLongWaitsOnce) {
  std::string dir = testing::MakeTempDir("seatwatch-locks");
  int port = testing::FreePort();
  std::string config = dir + "/seatwatch.toml";
  testing::WriteFile(config, "[database]\ndsn = \"" + db_.dsn() + "\"\n" +
                                 "[http]\nlisten = \"127.0.0.1:" + std::to_string(port) + "\"\n" +
                                 "[locks]\ninterval = \"200ms\"\nlog_threshold = \"500ms\"\n" +
                                 "resolve_rows = [\"seats\"]\n");
  testing::DaemonProcess daemon({"--config", config});
  AsyncSession holder(db_.dsn(), "holder");
  AsyncSession first(db_.dsn(), "first");
  AsyncSession second(db_.dsn(), "second");
  ASSERT_EQ(holder.Run("BEGIN; " + Claim("A13")), "");
  first.Send(Claim("A13"));
  AwaitWaiters(1);
  second.Send(Claim("A13"));
  AwaitWaiters(2);

  std::string api;
  ASSERT_TRUE(WaitFor([&] {
    api = testing::HttpGet(port, "/api/locks").body;
    return api.find("\"hot_row\":\"seats(event_id=1, seat=A13)\"") != std::string::npos;
  }, 10s)) << api << daemon.Log();
  EXPECT_NE(api.find("\"application_name\":\"holder\""), std::string::npos) << api;
  std::string metrics = testing::ScrapeMetrics(port);
  EXPECT_EQ(Sample(metrics, "seatwatch_check_success{check=\"locks\"}"), 1) << metrics;
  EXPECT_EQ(Sample(metrics, "seatwatch_lock_waiting_sessions"), 2) << metrics;

  auto count = [](const std::string& text, const std::string& part) {
    size_t n = 0;
    for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
    return n;
  };
  const std::string line = "msg=\"lock wait past threshold\"";
  ASSERT_TRUE(WaitFor([&] { return count(daemon.Log(), line) >= 2; }, 10s)) << daemon.Log();
  std::this_thread::sleep_for(1s);  // five more polls: still one line per episode
  std::string log = daemon.Log();
  EXPECT_EQ(count(log, line), 2u) << log;
  EXPECT_NE(log.find("root_pid=" + std::to_string(holder.pid()) +
                     " root_state=\"idle in transaction\" root_application=holder"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("hot_row=\"seats(event_id=1, seat=A13)\""), std::string::npos) << log;
  EXPECT_NE(log.find("waiting_behind_root=2"), std::string::npos) << log;

  ASSERT_EQ(holder.Run("ROLLBACK"), "");
  EXPECT_EQ(first.Finish(), "");
  EXPECT_EQ(second.Finish(), "");
  ASSERT_TRUE(WaitFor([&] {
    return Sample(testing::ScrapeMetrics(port),
                  "seatwatch_lock_wait_duration_seconds_count") == 2;
  }, 10s)) << testing::ScrapeMetrics(port);
}

}  // namespace
}  // namespace seatwatch
