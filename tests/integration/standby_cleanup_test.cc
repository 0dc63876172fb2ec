// The cleanup against a streaming standby of the scratch cluster, in-process:
// on the standby it frees nothing, is not the leader, says why exactly once
// (not per interval), exports seatwatch_cleanup_in_recovery 1 and counts no
// failure (no backoff); once the standby is promoted the same worker, on the
// same connection, takes the leader lock there and frees the expired holds
// of the promoted server, while the shared primary keeps its own. And a
// failover seen through a multi-host DSN with target_session_attrs =
// read-write: the cleanup's backend on the old server ends, the worker
// reconnects, lands on the promoted server and leads there.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include "cleanup/cleanup_worker.h"
#include "cleanup/published_text.h"
#include "config/config.h"
#include "config/load.h"
#include "support/daemon_process.h"
#include "support/log_capture.h"
#include "support/scratch_db.h"
#include "support/standby.h"
#include "support/test_env.h"
#include "util/log.h"

namespace seatwatch::cleanup {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::ScratchDatabase;
using testing::ScratchStandby;

constexpr const char* kStandbyLine =
    "msg=\"cleanup: the database is a standby (in recovery); holds are freed only on the "
    "primary, waiting\"";
constexpr const char* kPrimaryLine = "msg=\"cleanup: the database is a primary now; cleanup "
                                     "resumes\"";
constexpr const char* kExpiredHeld =
    "SELECT count(*) FROM seats WHERE status = 'held' AND hold_expires_at <= now()";
// The cleanup leader lock's holders, as "application_name" (see CleanupLeader).
constexpr const char* kLockHolders =
    "SELECT coalesce(string_agg(a.application_name, ','), '') FROM pg_locks l "
    "JOIN pg_stat_activity a ON a.pid = l.pid "
    "WHERE l.locktype = 'advisory' AND l.granted AND l.classid = 1936023924 "
    "AND l.objid = 2002875491 AND l.objsubid = 1";

using testing::LogCapture;

size_t Count(const std::string& text, const std::string& part) {
  return testing::CountOccurrences(text, part);
}

double Series(const PublishedText& text, const std::string& series) {
  return testing::Sample(*text.Current(), series);
}

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

config::Config StandbyCleanupConfig(const std::string& dsn) {
  config::Config config;
  config.database.dsn = dsn;
  config.database.application_name = "sw-standby-test";
  config.database.reconnect_max_backoff = 500ms;
  config.cleanup.enabled = true;
  std::string queries = testing::SourceDir() + "/queries/booking/";
  config.cleanup.sql = config::TrimSql(testing::ReadFile(queries + "cleanup_expired_holds.sql"));
  config.cleanup.dry_run_sql =
      config::TrimSql(testing::ReadFile(queries + "cleanup_expired_holds.dry_run.sql"));
  config.cleanup.interval = 200ms;
  config.cleanup.batch_size = 100;
  config.cleanup.batch_pause = 0ms;
  config.cleanup.lock_timeout = 100ms;
  config.cleanup.statement_timeout = 2s;
  return config;
}

// 12 seats of event 1, S1..S5 held with an expiry in the past, S6 held
// until later.
void Seed(const ScratchDatabase& db) {
  db.Exec(
      "INSERT INTO seats (event_id, seat) SELECT 1, 'S' || n FROM generate_series(1, 12) n;"
      "UPDATE seats SET status = 'held', holder = 'fan-' || seat, "
      "hold_expires_at = now() - interval '1 minute' WHERE seat IN ('S1','S2','S3','S4','S5');"
      "UPDATE seats SET status = 'held', holder = 'fan-S6', "
      "hold_expires_at = now() + interval '1 hour' WHERE seat = 'S6'");
}

// Every series that counts a failure or a run: none may move on a standby.
void ExpectNothingCounted(const PublishedText& text) {
  for (const char* result : {"ok", "lock_timeout", "error"}) {
    EXPECT_EQ(Series(text, std::string("seatwatch_cleanup_batches_total{result=\"") + result +
                               "\"}"),
              0)
        << result;
  }
  EXPECT_EQ(Series(text, "seatwatch_cleanup_freed_total"), 0);
  EXPECT_EQ(Series(text, "seatwatch_cleanup_last_success_timestamp_seconds"), 0);
}

TEST(StandbyCleanupTest, WaitsOnAStandbyThenLeadsAndFreesOnceItIsPromoted) {
  ScratchDatabase db("sw_standby_cleanup");
  Seed(db);
  ScratchStandby standby;
  standby.WaitReplayed();
  ASSERT_EQ(standby.Scalar(db.name(), kExpiredHeld), "5");

  log::SetLevel(log::Level::kDebug);  // "backing off" is a debug line
  struct RestoreLevel {
    ~RestoreLevel() { log::SetLevel(log::Level::kInfo); }
  } restore_level;
  auto capture = std::make_unique<LogCapture>();
  config::Config config = StandbyCleanupConfig(standby.Dsn(db.name()));
  auto text = std::make_shared<PublishedText>();
  CleanupWorker worker(config, CleanupMetrics(config.cleanup), text);
  worker.Start();

  ASSERT_TRUE(testing::WaitFor(
      [&] { return Series(*text, "seatwatch_cleanup_in_recovery") == 1; }, 10s))
      << *text->Current() << capture->Text();
  std::this_thread::sleep_for(850ms);  // about four more intervals of 200 ms
  EXPECT_EQ(Series(*text, "seatwatch_cleanup_in_recovery"), 1);
  EXPECT_EQ(Series(*text, "seatwatch_cleanup_leader"), 0);
  ExpectNothingCounted(*text);
  std::shared_ptr<const CleanupStatus> status = text->Status();
  EXPECT_TRUE(status->in_recovery);
  EXPECT_FALSE(status->leader);
  EXPECT_EQ(status->last_run_unix, 0);
  // Nothing freed anywhere; the standby's lock table holds no leader lock.
  EXPECT_EQ(db.Scalar(kExpiredHeld), "5");
  EXPECT_EQ(standby.Scalar(db.name(), kExpiredHeld), "5");
  EXPECT_EQ(standby.Scalar("postgres", kLockHolders), "");
  {
    std::string log = capture->Text();
    EXPECT_EQ(Count(log, kStandbyLine), 1u) << log;
    EXPECT_EQ(Count(log, "level=warn"), 1u) << "no other warning, no error:\n" << log;
    EXPECT_EQ(Count(log, "level=error"), 0u) << log;
    EXPECT_EQ(Count(log, "backing off"), 0u) << log;
    EXPECT_EQ(Count(log, kPrimaryLine), 0u) << log;
    // The DSN masked, the retry interval given.
    EXPECT_NE(log.find(kStandbyLine + std::string(" dsn=")), std::string::npos) << log;
    EXPECT_NE(log.find("retry_every=200ms"), std::string::npos) << log;
  }

  auto promoted = Clock::now();
  standby.Promote();
  // Not backed off: leads and frees within a few intervals of the promotion.
  ASSERT_TRUE(testing::WaitFor(
      [&] { return Series(*text, "seatwatch_cleanup_freed_total") == 5; }, 10s))
      << *text->Current() << capture->Text();
  double took = Seconds(Clock::now() - promoted);
  EXPECT_LT(took, 3.0);
  EXPECT_EQ(Series(*text, "seatwatch_cleanup_in_recovery"), 0);
  EXPECT_EQ(Series(*text, "seatwatch_cleanup_leader"), 1);
  EXPECT_EQ(Series(*text, "seatwatch_cleanup_batches_total{result=\"error\"}"), 0);
  EXPECT_EQ(standby.Scalar(db.name(), kExpiredHeld), "0");
  EXPECT_EQ(standby.Scalar(db.name(), "SELECT status FROM seats WHERE seat = 'S6'"), "held");
  EXPECT_EQ(standby.Scalar("postgres", kLockHolders), "sw-standby-test-cleanup");
  EXPECT_FALSE(text->Status()->in_recovery);
  // The shared primary is another server: its holds are untouched.
  EXPECT_EQ(db.Scalar(kExpiredHeld), "5");
  EXPECT_EQ(db.Scalar(kLockHolders), "");

  worker.Stop();
  std::string log = capture->Text();
  capture.reset();
  std::cerr << "promotion to expired holds freed on the promoted server: " << took << " s\n";
  EXPECT_EQ(Count(log, kStandbyLine), 1u) << log;
  EXPECT_EQ(Count(log, kPrimaryLine), 1u) << log;
  EXPECT_EQ(Count(log, "backing off"), 0u) << log;
  EXPECT_EQ(Count(log, "level=error"), 0u) << log;
  EXPECT_NE(log.find("msg=\"cleanup: this instance is now the cleanup leader\""),
            std::string::npos)
      << log;
}

// Failover as libpq sees it: "host=standby,primary target_session_attrs=
// read-write" reaches the primary while the standby is in recovery; after
// the promotion and the end of the cleanup's backend on the old server, the
// reconnect lands on the promoted server, and CleanupLeader::Ensure takes the
// lock there.
TEST(StandbyCleanupTest, AfterAFailoverTheReconnectLeadsOnThePromotedServer) {
  ScratchDatabase db("sw_standby_failover");
  Seed(db);
  ScratchStandby standby;
  standby.WaitReplayed();
  std::string primary_dir = testing::ScratchPgDir();
  std::string primary_port = testing::ReadFile(primary_dir + "/port");
  while (!primary_port.empty() && primary_port.back() == '\n') primary_port.pop_back();
  std::string dsn = "host=" + standby.dir() + "/sock," + primary_dir + "/sock port=" +
                    std::to_string(standby.port()) + "," + primary_port +
                    " user=postgres dbname=" + db.name() + " target_session_attrs=read-write";

  config::Config config = StandbyCleanupConfig(dsn);
  auto text = std::make_shared<PublishedText>();
  CleanupWorker worker(config, CleanupMetrics(config.cleanup), text);
  worker.Start();
  // On the primary (the standby is skipped): it leads and frees there.
  ASSERT_TRUE(testing::WaitFor(
      [&] { return Series(*text, "seatwatch_cleanup_freed_total") == 5; }, 10s))
      << *text->Current();
  EXPECT_EQ(db.Scalar(kLockHolders), "sw-standby-test-cleanup");
  EXPECT_EQ(Series(*text, "seatwatch_cleanup_in_recovery"), 0);

  standby.Promote();
  // Holds that expired on the promoted server only (it takes writes now).
  standby.Exec(db.name(),
               "UPDATE seats SET status = 'held', holder = 'fan-' || seat, "
               "hold_expires_at = now() - interval '1 minute' WHERE seat IN ('S7','S8','S9')");
  // The old primary goes away for the cleanup: its backend ends.
  db.Exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
          "WHERE application_name = 'sw-standby-test-cleanup'");
  ASSERT_TRUE(testing::WaitFor(
      [&] { return standby.Scalar("postgres", kLockHolders) == "sw-standby-test-cleanup"; }, 10s))
      << *text->Current();
  ASSERT_TRUE(testing::WaitFor(
      [&] { return Series(*text, "seatwatch_cleanup_freed_total") == 8; }, 10s))
      << *text->Current();
  EXPECT_EQ(standby.Scalar(db.name(), kExpiredHeld), "0");
  EXPECT_EQ(Series(*text, "seatwatch_cleanup_leader"), 1);
  EXPECT_EQ(Series(*text, "seatwatch_cleanup_in_recovery"), 0);
  EXPECT_EQ(db.Scalar(kLockHolders), "");
  worker.Stop();
}

}  // namespace
}  // namespace seatwatch::cleanup
