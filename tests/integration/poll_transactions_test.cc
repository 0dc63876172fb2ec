// Each check in a short transaction of its own: the ACCESS SHARE lock a
// check takes on a table is held only while that check runs, so a migration
// (ALTER TABLE) queues behind one monitoring statement, never behind a whole
// poll, and the application's queries behind the ALTER no longer wait for
// the monitor's slowest check.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include <pqxx/nontransaction>

#include "checks/registry.h"
#include "metrics/snapshot.h"
#include "poll/poller.h"
#include "support/daemon_process.h"
#include "support/scratch_db.h"
#include "support/test_config.h"
#include "support/test_env.h"

namespace seatwatch {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::ScratchDatabase;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// Two [[metric]] entries of a column n, each {name, SQL file}, and nothing else.
config::Config TwoMetrics(const ScratchDatabase& db, const std::pair<std::string, std::string>& a,
                          const std::pair<std::string, std::string>& b) {
  std::string toml = "[locks]\nenabled = false\n[holds]\nenabled = false\n";
  for (const auto& [name, sql] : {a, b}) {
    toml += "[[metric]]\nname = \"" + name + "\"\nsql = \"" + sql + "\"\nvalue = \"n\"\n";
  }
  return testing::ConfigFromToml(toml, db.dsn());
}

TEST(PollTransactionsTest, AlterWaitsOnlyForTheCheckThatReadsItsTable) {
  ScratchDatabase db("sw_poll_tx_alter");
  db.Exec("INSERT INTO seats (event_id, seat) VALUES (1, 'A1')");
  std::string dir = testing::MakeTempDir("seatwatch-sql");
  // seats for 1.5 s, then 3 s on another table.
  testing::WriteFile(dir + "/seats.sql", "SELECT count(*) AS n FROM seats, pg_sleep(1.5)");
  testing::WriteFile(dir + "/tickets.sql", "SELECT count(*) AS n FROM tickets, pg_sleep(3)");
  config::Config config = TwoMetrics(db, {"seats_slow", dir + "/seats.sql"},
                                      {"tickets_slow", dir + "/tickets.sql"});
  metrics::SnapshotStore store;
  poll::Poller poller(config, checks::BuildChecks(config), store, "test");

  metrics::PollState state;
  auto poll_start = Clock::now();
  Clock::time_point poll_end;
  std::thread polling([&] {
    state = poller.RunAllOnce();
    poll_end = Clock::now();
  });
  // Wait until the first check holds its lock on seats.
  auto watcher = db.Connect();
  bool reading = testing::WaitFor([&] {
    pqxx::nontransaction tx(*watcher);
    return tx.exec("SELECT 1 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
                   "WHERE c.relname = 'seats' AND l.mode = 'AccessShareLock' AND l.pid <> "
                   "pg_backend_pid()")
               .size() > 0;
  }, 5s);
  ASSERT_TRUE(reading) << "the first check never locked seats";
  auto migration = db.Connect();
  auto alter_start = Clock::now();
  {
    pqxx::nontransaction tx(*migration);
    tx.exec0("SET lock_timeout = 0");
    tx.exec0("ALTER TABLE seats ADD COLUMN note text");
  }
  double alter_wait = Seconds(Clock::now() - alter_start);
  polling.join();
  double poll_took = Seconds(poll_end - poll_start);
  RecordProperty("alter_wait_seconds", std::to_string(alter_wait));
  std::cerr << "ALTER waited " << alter_wait << " s; the poll took " << poll_took << " s\n";
  for (const auto& check : state.checks) EXPECT_TRUE(check.success) << check.name << check.last_error;
  EXPECT_GT(poll_took, 4.0);
  // At most the 1.5 s statement on seats, never the 3 s check after it.
  EXPECT_LT(alter_wait, 2.5) << "the ALTER queued behind the whole poll";
}

// What a run cost the database (the recheck budget counts it) is its
// transaction's statements: the BEGIN, each statement until its rows were
// read, the COMMIT. A check served whole from the poll's cache opened no
// transaction and cost nothing.
TEST(PollTransactionsTest, ARunsDatabaseTimeIsItsStatementsAlone) {
  ScratchDatabase db("sw_poll_tx_db_time");
  db.Exec("INSERT INTO seats (event_id, seat) VALUES (1, 'A1')");
  std::string dir = testing::MakeTempDir("seatwatch-sql");
  testing::WriteFile(dir + "/seats.sql", "SELECT count(*) AS n FROM seats, pg_sleep(0.3)");
  config::Config config = TwoMetrics(db, {"seats_first", dir + "/seats.sql"},
                                      {"seats_again", dir + "/seats.sql"});
  metrics::SnapshotStore store;
  poll::Poller poller(config, checks::BuildChecks(config), store, "test");
  metrics::PollState state = poller.RunAllOnce();
  ASSERT_EQ(state.checks.size(), 2u);
  const auto& first = state.checks[0].name == "seats_first" ? state.checks[0] : state.checks[1];
  const auto& again = state.checks[0].name == "seats_first" ? state.checks[1] : state.checks[0];
  ASSERT_TRUE(first.success) << first.last_error;
  ASSERT_TRUE(again.success) << again.last_error;
  EXPECT_GE(first.database_seconds, 0.3);
  EXPECT_LE(first.database_seconds, first.duration_seconds);
  EXPECT_EQ(again.database_seconds, 0.0);
}

}  // namespace
}  // namespace seatwatch
