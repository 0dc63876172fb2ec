// The locks check in a lane of its own, through the built daemon: its own
// session (application_name "<name>-locks") with its timeouts in the
// connection options, so a lock poll is the server's facts, then BEGIN, one
// read, COMMIT; a slow poll of the other checks does not hold it up; and a
// check served whole from the poll's query cache opens no transaction.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <map>
#include <cmath>
#include <set>
#include <string>
#include <thread>

#include <pqxx/nontransaction>
#include <pqxx/result>

#include "support/daemon_process.h"
#include "support/daemon_test.h"
#include "support/test_env.h"

namespace seatwatch {
namespace {

using namespace std::chrono_literals;
using testing::DaemonProcess;
using testing::Sample;
using testing::WaitFor;

// A role of its own, so that pg_stat_statements tells the daemon's
// statements from the test's.
constexpr const char* kRole = "sw_lanes_monitor";

class PollLanesTest : public testing::DaemonTest {
 protected:
  PollLanesTest() : DaemonTest("sw_lanes", "seatwatch-lanes") {
    db_.Exec(std::string("DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '") +
             kRole + "') THEN CREATE ROLE " + kRole + " LOGIN; END IF; END $$");
    db_.Exec(std::string("GRANT pg_monitor TO ") + kRole);
    db_.Exec(std::string("GRANT SELECT ON ALL TABLES IN SCHEMA public TO ") + kRole);
    db_.Exec("INSERT INTO seats (event_id, seat) VALUES (1, 'A1')");
  }

  std::string WriteConfig(const std::string& extra) {
    std::string path = dir_ + "/seatwatch.toml";
    // allow_no_checks: ReloadTurnsTheLocksLaneOffAndOn reloads to a config
    // whose only check, the locks check, is disabled.
    testing::WriteFile(path, "allow_no_checks = true\n[database]\ndsn = \"" + db_.dsn() + " user=" + kRole +
                                 "\"\napplication_name = \"sw_lanes\"\n"
                                 "[http]\nlisten = \"127.0.0.1:" + std::to_string(port_) +
                                 "\"\n[locks]\ninterval = \"200ms\"\n" + extra);
    return path;
  }


  // The calls of each statement the daemon's role ran in this database.
  std::map<std::string, long> Statements() {
    auto reader = db_.Connect();
    pqxx::nontransaction read(*reader);
    std::map<std::string, long> calls;
    for (const auto& row : read.exec(std::string(
             "SELECT s.query, s.calls FROM pg_stat_statements AS s "
             "JOIN pg_database AS d ON d.oid = s.dbid "
             "JOIN pg_roles AS r ON r.oid = s.userid "
             "WHERE d.datname = current_database() AND r.rolname = '") +
             kRole + "'")) {
      calls[row[0].c_str()] += row[1].as<long>(0);
    }
    return calls;
  }

  int Sessions(const std::string& application_name) {
    return std::stoi(db_.Scalar("SELECT count(*) FROM pg_stat_activity WHERE application_name = '" +
                                application_name + "'"));
  }
};

TEST_F(PollLanesTest, LockPollIsOneReadInItsOwnTransactionOnItsOwnSession) {
  std::string config = WriteConfig("");
  db_.Exec("SELECT pg_stat_statements_reset()");
  DaemonProcess daemon({"--config", config});
  ASSERT_TRUE(WaitFor([&] {
    return Sample(Metrics(), "seatwatch_check_success{check=\"locks\"}") == 1;
  }, 10s)) << daemon.Log();
  std::this_thread::sleep_for(1s);
  EXPECT_EQ(Sessions("sw_lanes-locks"), 1);
  EXPECT_EQ(Sessions("sw_lanes"), 0) << "the checks lane has no checks and never connects";
  EXPECT_EQ(daemon.Stop(), 0) << daemon.Log();

  auto reader = db_.Connect();
  pqxx::nontransaction read(*reader);
  pqxx::result rows = read.exec(
      std::string("SELECT s.query, s.calls FROM pg_stat_statements AS s "
                  "JOIN pg_database AS d ON d.oid = s.dbid "
                  "JOIN pg_roles AS r ON r.oid = s.userid "
                  "WHERE d.datname = current_database() AND r.rolname = '") + kRole + "'");
  long polls = 0;
  long facts = 0;
  long probes = 0;
  long total = 0;
  std::map<std::string, long> others;
  for (const auto& row : rows) {
    std::string query = row[0].c_str();
    long calls = row[1].as<long>(0);
    total += calls;
    if (query.find("pg_stat_activity") != std::string::npos) {
      polls += calls;
    } else if (query.find("pg_is_in_recovery()") != std::string::npos) {
      facts += calls;
    } else if (query.find("pg_backend_pid(), (SELECT setting") != std::string::npos) {
      probes += calls;
    } else {
      others[query] += calls;
    }
  }
  EXPECT_GE(polls, 4);
  // Before each poll's checks, outside any transaction: standby or primary,
  // replay lag, the server's identity (one more if the stop came between the
  // facts and the check).
  EXPECT_GE(facts, polls);
  EXPECT_LE(facts, polls + 1);
  // Once per connection: whether it goes through a pooler (it does not), so
  // the session turns idle_session_timeout off for itself.
  EXPECT_EQ(probes, 1);
  // Everything else is the transaction around the read: its timeouts SET
  // LOCAL in one round trip (they hold through a pooler too), no savepoint,
  // no second read.
  EXPECT_EQ(others, (std::map<std::string, long>{{"BEGIN", polls},
                                                 {"SET TRANSACTION READ ONLY", polls},
                                                 {"SET LOCAL statement_timeout = 1000", polls},
                                                 {"SET LOCAL lock_timeout = 100", polls},
                                                 {"SET LOCAL jit = off", polls},
                                                 {"SET LOCAL extra_float_digits = 1", polls},
                                                 {"COMMIT", polls},
                                                 {"SET idle_session_timeout = 0", 1}}));
  EXPECT_EQ(total, 8 * polls + facts + probes + 1);
}

// A check's transaction begins with its first statement: two [[metric]]
// entries of one query cost the server one execution a poll (the poll's
// query cache) and now one transaction too; the second check, served whole
// from the cache, sends no BEGIN, SET LOCAL or COMMIT. (The locks lane's
// transactions are READ COMMITTED with a 1 s timeout: not counted here.)
TEST_F(PollLanesTest, ACheckServedWholeFromThePollsCacheOpensNoTransaction) {
  testing::WriteFile(dir_ + "/seats.sql", "SELECT count(*)::float8 AS n FROM seats");
  std::string entry = "sql = \"" + dir_ + "/seats.sql\"\nvalue = \"n\"\n";
  std::string config = WriteConfig("[poll]\ninterval = \"1s\"\n[[metric]]\nname = \"seats_a\"\n" +
                                   entry + "[[metric]]\nname = \"seats_b\"\n" + entry);
  db_.Exec("SELECT pg_stat_statements_reset()");
  DaemonProcess daemon({"--config", config});
  ASSERT_TRUE(WaitFor([&] {
    std::string text = Metrics();
    return Sample(text, "seatwatch_check_success{check=\"seats_a\"}") == 1 &&
           Sample(text, "seatwatch_check_success{check=\"seats_b\"}") == 1;
  }, 15s)) << daemon.Log();
  std::this_thread::sleep_for(3s);
  std::string text = Metrics();
  EXPECT_EQ(Sample(text, "seatwatch_check_success{check=\"seats_b\"}"), 1) << text;
  EXPECT_EQ(daemon.Stop(), 0) << daemon.Log();

  std::map<std::string, long> calls = Statements();
  long reads = 0;
  for (const auto& [query, n] : calls) {
    if (query.find("FROM seats") != std::string::npos) reads += n;
  }
  EXPECT_GE(reads, 3) << ::testing::PrintToString(calls);
  // One transaction a poll, the first check's.
  EXPECT_EQ(calls["SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY"], reads)
      << ::testing::PrintToString(calls);
  EXPECT_EQ(calls["SET LOCAL statement_timeout = 5000"], reads) << ::testing::PrintToString(calls);
}

// A configured metric sleeping 3 s keeps the checks lane in one long poll
// after another; the lock lane keeps its 200 ms cadence meanwhile, sees a
// new waiter at once, and SIGTERM still stops the daemon once the sleeping
// statement ends.
TEST_F(PollLanesTest, SlowChecksDoNotDelayTheLockPoll) {
  testing::WriteFile(dir_ + "/slow.sql", "SELECT 1 AS n FROM pg_sleep(3)");
  std::string config = WriteConfig("[poll]\ninterval = \"1s\"\n[[metric]]\nname = \"slow\"\nsql = \"" +
                                   dir_ + "/slow.sql\"\nvalue = \"n\"\n");
  DaemonProcess daemon({"--config", config});
  std::string text;
  ASSERT_TRUE(WaitFor([&] {
    text = Metrics();
    return Sample(text, "seatwatch_check_success{check=\"slow\"}") == 1;
  }, 15s)) << daemon.Log();
  // The checks lane is due again at once and back in pg_sleep(3).
  double slow_done = Sample(text, "seatwatch_check_last_success_timestamp_seconds{check=\"slow\"}");
  EXPECT_EQ(Sample(text, "seatwatch_up"), 1) << text;
  EXPECT_EQ(Sessions("sw_lanes"), 1);
  EXPECT_EQ(Sessions("sw_lanes-locks"), 1);

  auto holder = db_.Connect();
  pqxx::nontransaction hold(*holder);
  hold.exec0("BEGIN");
  hold.exec0("UPDATE seats SET status = 'held' WHERE seat = 'A1'");
  auto waiter = db_.Connect();
  std::thread waiting([&] {
    try {
      pqxx::nontransaction tx(*waiter);
      tx.exec0("UPDATE seats SET status = 'held' WHERE seat = 'A1'");
    } catch (const std::exception&) {
    }
  });
  auto started = std::chrono::steady_clock::now();
  std::set<double> lock_polls;
  bool seen = WaitFor([&] {
    text = Metrics();
    lock_polls.insert(
        Sample(text, "seatwatch_check_last_success_timestamp_seconds{check=\"locks\"}"));
    return Sample(text, "seatwatch_lock_waiting_sessions") == 1;
  }, 10s);
  auto took = std::chrono::steady_clock::now() - started;
  hold.exec0("ROLLBACK");
  waiting.join();
  ASSERT_TRUE(seen) << text << daemon.Log();
  EXPECT_LT(took, 2s) << "the lock poll waited for the slow one";
  EXPECT_EQ(Sample(text, "seatwatch_check_last_success_timestamp_seconds{check=\"slow\"}"),
            slow_done)
      << "the waiter was seen while the slow poll was still running";

  // Over two seconds of the slow poll, the lock lane polls about ten times.
  double first = Sample(Metrics(), "seatwatch_check_last_success_timestamp_seconds{check=\"locks\"}");
  std::this_thread::sleep_for(2s);
  double last = Sample(Metrics(), "seatwatch_check_last_success_timestamp_seconds{check=\"locks\"}");
  EXPECT_GT(last - first, 1.5);

  auto stop = std::chrono::steady_clock::now();
  EXPECT_EQ(daemon.Stop(), 0) << daemon.Log();
  EXPECT_LT(std::chrono::steady_clock::now() - stop, 5s);
  EXPECT_NE(daemon.Log().find("lane=locks"), std::string::npos) << daemon.Log();
}

// SIGHUP hands each lane its share: with [locks] disabled the locks lane
// has no check and closes its session; enabled again, it polls again.
TEST_F(PollLanesTest, ReloadTurnsTheLocksLaneOffAndOn) {
  std::string config = WriteConfig("");
  DaemonProcess daemon({"--config", config});
  ASSERT_TRUE(WaitFor([&] {
    return Sample(Metrics(), "seatwatch_check_success{check=\"locks\"}") == 1;
  }, 10s)) << daemon.Log();
  EXPECT_EQ(Sessions("sw_lanes-locks"), 1);

  testing::WriteFile(config, testing::ReadFile(config) + "enabled = false\n");
  daemon.Signal(SIGHUP);
  EXPECT_TRUE(WaitFor([&] { return Sessions("sw_lanes-locks") == 0; }, 10s)) << daemon.Log();
  EXPECT_TRUE(std::isnan(Sample(Metrics(), "seatwatch_check_success{check=\"locks\"}")));

  WriteConfig("");
  daemon.Signal(SIGHUP);
  EXPECT_TRUE(WaitFor([&] {
    return Sample(Metrics(), "seatwatch_check_success{check=\"locks\"}") == 1 &&
           Sessions("sw_lanes-locks") == 1;
  }, 10s)) << daemon.Log();
  EXPECT_EQ(daemon.Stop(), 0) << daemon.Log();
}

}  // namespace
}  // namespace seatwatch
