// The cleanup through a connection that stops answering (a proxy that
// stalls with its sockets open) while a batch is in flight: SIGTERM still
// exits at once, and without a signal the worker gives up on the batch
// within statement_timeout plus the watchdog's margin, counts it as a failed
// batch, backs off, and leads and frees holds again once the path answers.
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <string>
#include <thread>

#include "support/daemon_process.h"
#include "support/daemon_test.h"
#include "support/test_config.h"
#include "support/test_env.h"

namespace seatwatch {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::DaemonProcess;
using testing::Sample;
using testing::SecondsSince;
using testing::WaitFor;

constexpr const char* kErrors = "seatwatch_cleanup_batches_total{result=\"error\"}";

class CleanupStallTest : public testing::ProxiedDaemonTest {
 protected:
  CleanupStallTest()
      : ProxiedDaemonTest("sw_cleanup_stall", "seatwatch-cleanup-stall") {
    std::string queries = testing::SourceDir() + "/queries/booking/";
    // The shipped statement with a pause inside, so that the test can stall
    // the path while a batch is certainly running: its answer then never
    // arrives.
    testing::WriteFile(dir_ + "/slow_cleanup.sql", testing::SlowCleanupSql("1"));
    config_ = dir_ + "/seatwatch.toml";
    // statement_timeout 2 s: the watchdog gives up after 2 s + its 2 s margin
    // of silence. interval 1 s: a run starts every second.
    testing::WriteFile(
        config_,
        "log_level = \"info\"\n[database]\ndsn = \"" + ProxiedDsn() +
            "\"\napplication_name = \"sw-stall\"\nconnect_timeout = \"2s\"\n"
            "reconnect_max_backoff = \"1s\"\n[http]\nlisten = \"127.0.0.1:" +
            std::to_string(port_) +
            "\"\n[poll]\ninterval = \"1s\"\n[locks]\nenabled = false\n"
            "[holds]\nsql = \"" + queries + "holds.sql\"\n"
            "[cleanup]\nenabled = true\ninterval = \"1s\"\nbatch_size = 1\n"
            "batch_pause = \"0ms\"\nstatement_timeout = \"2s\"\n"
            "sql = \"" + dir_ + "/slow_cleanup.sql\"\n"
            "dry_run_sql = \"" + queries + "cleanup_expired_holds.dry_run.sql\"\n");
    db_.Exec("INSERT INTO seats (event_id, seat) SELECT 1, 'S' || n FROM generate_series(1, 50) n");
    AddExpiredHolds(20);
  }

  void AddExpiredHolds(int count) {
    db_.Exec(
        "UPDATE seats SET status = 'held', holder = 'fan', hold_expires_at = now() - interval "
        "'1 minute' WHERE seat IN (SELECT seat FROM seats WHERE status = 'free' ORDER BY seat "
        "LIMIT " + std::to_string(count) + ")");
  }

  // Whether the cleanup's batch statement is running on the server (asked
  // directly, not through the proxy).
  bool BatchRunning() {
    return db_.Scalar(
               "SELECT count(*) FROM pg_stat_activity WHERE application_name = "
               "'sw-stall-cleanup' AND state = 'active' AND query LIKE '%pg_sleep%'") == "1";
  }
};

TEST_F(CleanupStallTest, SigtermDuringAStalledBatchExitsAtOnce) {
  DaemonProcess daemon({"--config", config_});
  ASSERT_TRUE(WaitFor([&] { return Sample(Metrics(), "seatwatch_cleanup_freed_total") >= 1; }, 20s))
      << daemon.Log();
  ASSERT_TRUE(WaitFor([&] { return BatchRunning(); }, 20s)) << daemon.Log();
  proxy_.Stall();
  // The batch's pg_sleep(1) ends on the server meanwhile; its answer is held
  // in the stalled path, so the worker is blocked reading it.
  std::this_thread::sleep_for(1500ms);
  auto sent = Clock::now();
  int code = daemon.Stop();
  double took = SecondsSince(sent);
  std::cerr << "SIGTERM to exit with a stalled cleanup batch: " << took << " s\n";
  EXPECT_EQ(code, 0) << daemon.Log();
  EXPECT_LT(took, 3.0) << daemon.Log();
  std::string log = daemon.Log();
  EXPECT_NE(log.find("cleanup worker stopped"), std::string::npos) << log;
}

TEST_F(CleanupStallTest, StalledBatchIsGivenUpCountedAndTheCleanupRecovers) {
  DaemonProcess daemon({"--config", config_});
  ASSERT_TRUE(WaitFor([&] { return Sample(Metrics(), "seatwatch_cleanup_freed_total") >= 1; }, 20s))
      << daemon.Log();
  ASSERT_EQ(Sample(Metrics(), kErrors), 0);
  ASSERT_TRUE(WaitFor([&] { return BatchRunning(); }, 20s)) << daemon.Log();
  proxy_.Stall();
  auto stalled = Clock::now();
  std::string text;
  ASSERT_TRUE(WaitFor([&] { return Sample(text = Metrics(), kErrors) == 1; }, 20s))
      << text << daemon.Log();
  double took = SecondsSince(stalled);
  std::cerr << "stalled batch given up after " << took << " s\n";
  // statement_timeout 2 s + margin 2 s, and slack for a loaded machine.
  EXPECT_GE(took, 3.0);
  EXPECT_LT(took, 10.0);
  EXPECT_EQ(Sample(text, "seatwatch_cleanup_leader"), 0);
  std::string log = daemon.Log();
  EXPECT_NE(log.find("result=error error=\"no answer within statement_timeout plus a margin"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("the leader lock goes with its backend"), std::string::npos) << log;
  // It backs off and does not pile up failures while the path stays stalled.
  std::this_thread::sleep_for(3s);
  EXPECT_LE(Sample(Metrics(), kErrors), 2);

  proxy_.Resume();
  double freed = Sample(Metrics(), "seatwatch_cleanup_freed_total");
  ASSERT_TRUE(WaitFor(
      [&] {
        text = Metrics();
        return Sample(text, "seatwatch_cleanup_leader") == 1 &&
               Sample(text, "seatwatch_cleanup_freed_total") > freed;
      },
      30s))
      << text << daemon.Log();
  auto sent = Clock::now();
  EXPECT_EQ(daemon.Stop(), 0) << daemon.Log();
  EXPECT_LT(SecondsSince(sent), 3.0);
}

}  // namespace
}  // namespace seatwatch
