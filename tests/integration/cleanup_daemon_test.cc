// The cleanup in the built daemon: exported also when off, turned on by a
// SIGHUP reload that drains the backlog, dry_run that changes nothing, and
// SIGTERM that cancels the batch in flight (rolled back) and stops at once.
#include <gtest/gtest.h>

#include <signal.h>

#include <cmath>

#include "support/daemon_process.h"
#include "support/daemon_test.h"
#include "support/scratch_db.h"
#include "support/test_config.h"
#include "support/test_env.h"

namespace seatwatch {
namespace {

using namespace std::chrono_literals;
using testing::DaemonProcess;
using testing::PromtoolCheck;
using testing::ScrapeMetrics;
using testing::ScrapeSample;
using testing::Sample;
using testing::ScratchDatabase;
using testing::WaitFor;

std::string Queries() { return testing::SourceDir() + "/queries/booking/"; }

// A daemon config with [holds] on, the lock check off, and `cleanup` as the
// body of the [cleanup] section.
std::string WriteConfig(const std::string& dir, const ScratchDatabase& db, int port,
                        const std::string& application_name, const std::string& cleanup) {
  std::string path = dir + "/seatwatch.toml";
  testing::WriteFile(path,
                     "log_level = \"info\"\n"
                     "[database]\n"
                     "dsn = \"" +
                         db.dsn() +
                         "\"\n"
                         "application_name = \"" +
                         application_name +
                         "\"\n"
                         "[http]\n"
                         "listen = \"127.0.0.1:" +
                         std::to_string(port) +
                         "\"\n"
                         "[poll]\n"
                         "interval = \"1s\"\n"
                         "[locks]\n"
                         "enabled = false\n"
                         "[holds]\n"
                         "sql = \"" +
                         Queries() +
                         "holds.sql\"\n"
                         "[cleanup]\n"
                         "sql = \"" +
                         Queries() +
                         "cleanup_expired_holds.sql\"\n"
                         "dry_run_sql = \"" +
                         Queries() + "cleanup_expired_holds.dry_run.sql\"\n" + cleanup);
  return path;
}

// `expired` expired holds over two events (expired 1..n minutes ago),
// `active` unexpired ones, two sold seats with tickets, and free seats.
void Seed(const ScratchDatabase& db, int expired, int active) {
  db.Exec(
      "INSERT INTO seats (event_id, seat) SELECT e, 'S' || n FROM generate_series(1, 2) e, "
      "generate_series(1, 200) n");
  db.Exec(
      "UPDATE seats SET status = 'held', holder = 'fan-' || event_id || seat, "
      "hold_expires_at = now() - interval '1 minute' * substr(seat, 2)::int "
      "WHERE substr(seat, 2)::int <= " +
      std::to_string((expired + 1) / 2) +
      " AND (event_id = 1 OR substr(seat, 2)::int <= " + std::to_string(expired / 2) + ")");
  db.Exec(
      "UPDATE seats SET status = 'held', holder = 'fan-' || event_id || seat, "
      "hold_expires_at = now() + interval '10 minutes' "
      "WHERE event_id = 1 AND substr(seat, 2)::int BETWEEN 150 AND " +
      std::to_string(149 + active));
  db.Exec(
      "UPDATE seats SET status = 'sold', holder = 'buyer', hold_expires_at = NULL "
      "WHERE event_id = 2 AND seat IN ('S199', 'S200')");
  db.Exec(
      "INSERT INTO tickets (event_id, seat, fan) SELECT event_id, seat, holder FROM seats "
      "WHERE status = 'sold'");
}

std::string ExpiredCount(const ScratchDatabase& db) {
  return db.Scalar("SELECT count(*) FROM seats WHERE status = 'held' AND hold_expires_at <= now()");
}

std::string TableChecksum(const ScratchDatabase& db) {
  return db.Scalar(
      "SELECT md5(string_agg(concat_ws('|', event_id, seat, status, holder, "
      "hold_expires_at, version), ',' ORDER BY event_id, seat)) FROM seats");
}

TEST(CleanupDaemonTest, OffExportsZeroesThenSighupTurnsItOnAndTheBacklogDrains) {
  ScratchDatabase db("sw_cleanup_sighup");
  Seed(db, 50, 5);
  ASSERT_EQ(ExpiredCount(db), "50");
  std::string dir = testing::MakeTempDir("seatwatch-cleanup");
  int port = testing::FreePort();
  std::string config = WriteConfig(dir, db, port, "sw-sighup", "enabled = false\n");
  DaemonProcess daemon({"--config", config});
  ASSERT_TRUE(WaitFor([&] { return ScrapeSample(port, "seatwatch_holds_expired") == 50; }, 20s))
      << daemon.Log();
  std::string text = ScrapeMetrics(port);
  EXPECT_EQ(Sample(text, "seatwatch_holds_active"), 5);
  EXPECT_EQ(Sample(text, "seatwatch_cleanup_enabled"), 0);
  EXPECT_EQ(Sample(text, "seatwatch_cleanup_leader"), 0);
  EXPECT_EQ(Sample(text, "seatwatch_cleanup_freed_total"), 0);
  EXPECT_EQ(Sample(text, "seatwatch_cleanup_batches_total{result=\"ok\"}"), 0);
  EXPECT_EQ(Sample(text, "seatwatch_cleanup_batches_total{result=\"lock_timeout\"}"), 0);
  EXPECT_EQ(Sample(text, "seatwatch_cleanup_batches_total{result=\"error\"}"), 0);
  EXPECT_EQ(Sample(text, "seatwatch_cleanup_interval_seconds"), 30);
  std::string output;
  EXPECT_EQ(PromtoolCheck(text, dir, &output), 0) << output;
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM pg_stat_activity WHERE application_name = "
                      "'sw-sighup-cleanup'"),
            "0");

  WriteConfig(dir, db, port, "sw-sighup",
              "enabled = true\ninterval = \"1s\"\nbatch_size = 20\nbatch_pause = \"10ms\"\n");
  daemon.Signal(SIGHUP);
  ASSERT_TRUE(
      WaitFor([&] { return ScrapeSample(port, "seatwatch_cleanup_freed_total") == 50; }, 20s))
      << daemon.Log();
  text = ScrapeMetrics(port);
  EXPECT_EQ(Sample(text, "seatwatch_cleanup_enabled"), 1);
  EXPECT_EQ(Sample(text, "seatwatch_cleanup_leader"), 1);
  EXPECT_EQ(Sample(text, "seatwatch_cleanup_interval_seconds"), 1);
  // 20 + 20 + 10: the third batch frees fewer than batch_size and ends the run.
  EXPECT_EQ(Sample(text, "seatwatch_cleanup_batches_total{result=\"ok\"}"), 3);
  EXPECT_GT(Sample(text, "seatwatch_cleanup_last_success_timestamp_seconds"), 0);
  EXPECT_EQ(Sample(text, "seatwatch_cleanup_batch_duration_seconds_count"), 3);
  EXPECT_EQ(PromtoolCheck(text, dir, &output), 0) << output;
  EXPECT_EQ(ExpiredCount(db), "0");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM seats WHERE status = 'held'"), "5");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM seats WHERE status = 'sold'"), "2");
  // The backlog gauge drains with it at the next poll.
  EXPECT_TRUE(WaitFor([&] { return ScrapeSample(port, "seatwatch_holds_expired") == 0; }, 10s));
  // The writing session is visible to a DBA under its own name.
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM pg_stat_activity WHERE application_name = "
                      "'sw-sighup-cleanup'"),
            "1");
  std::string log = daemon.Log();
  EXPECT_NE(log.find("cleanup settings changed; restarting the cleanup worker"), std::string::npos)
      << log;
  EXPECT_NE(log.find("msg=\"cleanup: freed expired holds\" freed=50 events=\"1:25 2:25\" "
                     "batches=3 duration="),
            std::string::npos)
      << log;
  EXPECT_EQ(daemon.Stop(), 0);
}

TEST(CleanupDaemonTest, DryRunChangesNothingAndCountsWhatItWouldFree) {
  ScratchDatabase db("sw_cleanup_dry_daemon");
  Seed(db, 30, 5);
  std::string before = TableChecksum(db);
  std::string dir = testing::MakeTempDir("seatwatch-cleanup");
  int port = testing::FreePort();
  // A long interval: exactly one run, at start.
  std::string config =
      WriteConfig(dir, db, port, "sw-dry", "enabled = true\ndry_run = true\ninterval = \"1h\"\n");
  DaemonProcess daemon({"--config", config});
  ASSERT_TRUE(
      WaitFor([&] { return ScrapeSample(port, "seatwatch_cleanup_freed_total") == 30; }, 20s))
      << daemon.Log();
  ASSERT_TRUE(WaitFor([&] { return ScrapeSample(port, "seatwatch_holds_expired") == 30; }, 10s));
  std::string text = ScrapeMetrics(port);
  EXPECT_EQ(Sample(text, "seatwatch_cleanup_leader"), 1);
  EXPECT_EQ(Sample(text, "seatwatch_cleanup_batches_total{result=\"ok\"}"), 1);
  EXPECT_EQ(TableChecksum(db), before);
  EXPECT_EQ(ExpiredCount(db), "30");
  std::string log = daemon.Log();
  EXPECT_NE(log.find("msg=\"cleanup dry run: would free expired holds\" freed=30"),
            std::string::npos)
      << log;
  EXPECT_EQ(daemon.Stop(), 0);
  EXPECT_EQ(TableChecksum(db), before);
}

TEST(CleanupDaemonTest, SigtermCancelsTheBatchInFlightThenStops) {
  ScratchDatabase db("sw_cleanup_sigterm");
  Seed(db, 3, 0);
  std::string dir = testing::MakeTempDir("seatwatch-cleanup");
  // The shipped statement with a pause inside, so that the test can send
  // SIGTERM while a batch is certainly running.
  std::string slow = dir + "/slow_cleanup.sql";
  testing::WriteFile(slow, testing::SlowCleanupSql("1.5"));
  int port = testing::FreePort();
  std::string config = WriteConfig(dir, db, port, "sw-term",
                                   "enabled = true\nbatch_size = 1\nbatch_pause = \"0ms\"\n"
                                   "statement_timeout = \"5s\"\n");
  // The [cleanup] sql key is given once; point it at the slow file instead.
  std::string text = testing::ReadFile(config);
  text.replace(text.find(Queries() + "cleanup_expired_holds.sql"),
               (Queries() + "cleanup_expired_holds.sql").size(), slow);
  testing::WriteFile(config, text);

  DaemonProcess daemon({"--config", config});
  ASSERT_TRUE(WaitFor(
      [&] {
        return db.Scalar(
                   "SELECT count(*) FROM pg_stat_activity WHERE application_name = "
                   "'sw-term-cleanup' AND state = 'active' AND query LIKE '%pg_sleep%'") == "1";
      },
      20s))
      << daemon.Log();
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(daemon.Stop(), 0);
  double stop_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // The batch in flight was cancelled and rolled back; the two batches after
  // it never ran: nothing was freed, and the next run frees them all.
  EXPECT_EQ(ExpiredCount(db), "3");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM seats WHERE status = 'free' AND version = 1"), "0");
  EXPECT_LT(stop_seconds, 3.0);
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND database = "
                      "(SELECT oid FROM pg_database WHERE datname = current_database())"),
            "0");
  std::string log = daemon.Log();
  EXPECT_NE(log.find("freed=0 events=- batches=0"), std::string::npos) << log;
  EXPECT_NE(log.find("error=\"stopping: the batch in flight was cancelled and rolled back\""),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("cleanup worker stopped"), std::string::npos) << log;
}

}  // namespace
}  // namespace seatwatch
