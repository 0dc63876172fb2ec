// The built binary, end to end: scraped over HTTP, checked by promtool,
// surviving a database restart, with the exit codes of --once and
// --check-config.
#include <gtest/gtest.h>

#include <signal.h>

#include <cmath>

#include "support/daemon_process.h"
#include "support/daemon_test.h"
#include "support/http_client.h"
#include "support/test_env.h"

namespace seatwatch {
namespace {

using namespace std::chrono_literals;
using testing::DaemonProcess;
using testing::HttpGet;
using testing::Sample;
using testing::WaitFor;

std::string PgDir() { return testing::ScratchPgDir(); }

// Restarts the scratch cluster if a test stopped it, whatever happened.
struct ClusterGuard {
  ~ClusterGuard() {
    std::string output;
    testing::RunCommand(testing::SourceDir() + "/scripts/pg-scratch start " + PgDir(), &output);
  }
};

class DaemonE2eTest : public testing::DaemonTest {
 protected:
  DaemonE2eTest() : DaemonTest("sw_e2e", "seatwatch-e2e") {
    db_.Exec("INSERT INTO seats (event_id, seat) SELECT e, 'A' || n FROM generate_series(1, 2) e, "
             "generate_series(1, 5) n");
    UseShippedConfig();
  }

  // The password must reach libpq (trust auth ignores it) and nothing else.
  std::vector<std::string> Env() { return {"SEATWATCH_DSN=" + db_.dsn() + " password=hunter2-secret"}; }
};

TEST_F(DaemonE2eTest, ServesMetricsThatPromtoolAccepts) {
  DaemonProcess daemon({"--config", config_}, Env());
  ASSERT_TRUE(WaitReady()) << daemon.Log();
  ASSERT_TRUE(WaitFor([&] { return !std::isnan(Sample(Metrics(), "seatwatch_check_success{check=\"locks\"}")); }, 10s));
  std::string text = Metrics();
  EXPECT_EQ(Sample(text, "seatwatch_up"), 1);
  EXPECT_EQ(Sample(text, "seatwatch_invariant_ok{invariant=\"sold_seat_without_ticket\"}"), 1);
  EXPECT_EQ(Sample(text, "seatwatch_check_success{check=\"booking_reconciliation\"}"), 1);
  EXPECT_EQ(Sample(text, "seatwatch_event_inventory{event_id=\"1\",kind=\"seats_free\"}"), 5);
  EXPECT_GT(Sample(text, "process_resident_memory_bytes"), 0);

  std::string output;
  EXPECT_EQ(testing::PromtoolCheck(text, dir_, &output), 0) << output;

  // A violation appears within a poll or two, with its detail in the API.
  db_.Exec("UPDATE seats SET status = 'sold', holder = 'admin' WHERE event_id = 2 AND seat = 'A3'");
  ASSERT_TRUE(WaitFor([&] {
    return Sample(Metrics(), "seatwatch_invariant_ok{invariant=\"sold_seat_without_ticket\"}") == 0;
  }, 10s));
  EXPECT_EQ(Sample(Metrics(), "seatwatch_invariant_violations{invariant=\"sold_seat_without_ticket\",event_id=\"2\"}"), 1);
  auto api = HttpGet(port_, "/api/invariants");
  EXPECT_EQ(api.status, 200);
  EXPECT_NE(api.body.find("\"status\":\"violated\""), std::string::npos) << api.body;
  EXPECT_NE(api.body.find("\"seat\":\"A3\""), std::string::npos) << api.body;

  EXPECT_EQ(HttpGet(port_, "/healthz").status, 200);
  EXPECT_EQ(HttpGet(port_, "/no/such/page").status, 404);
  EXPECT_EQ(HttpGet(port_, "/metricsx").status, 404);

  EXPECT_EQ(Metrics().find("hunter2"), std::string::npos);
  EXPECT_EQ(daemon.Stop(), 0);
  EXPECT_EQ(daemon.Log().find("hunter2"), std::string::npos) << daemon.Log();
  EXPECT_NE(daemon.Log().find("password=****"), std::string::npos) << daemon.Log();
}

TEST_F(DaemonE2eTest, SurvivesDatabaseRestart) {
  ClusterGuard guard;
  DaemonProcess daemon({"--config", config_}, Env());
  ASSERT_TRUE(WaitReady()) << daemon.Log();
  std::string output;
  ASSERT_EQ(testing::RunCommand(testing::SourceDir() + "/scripts/pg-scratch stop " + PgDir(), &output), 0)
      << output;
  EXPECT_TRUE(WaitFor([&] { return Sample(Metrics(), "seatwatch_up") == 0; }, 15s)) << daemon.Log();
  EXPECT_EQ(HttpGet(port_, "/readyz").status, 503);
  EXPECT_GT(Sample(Metrics(), "seatwatch_check_errors_total{check=\"booking_reconciliation\",reason=\"connection\"}"), 0);
  // Failing checks export no stale verdict.
  EXPECT_TRUE(std::isnan(Sample(Metrics(), "seatwatch_invariant_ok{invariant=\"sold_seat_without_ticket\"}")));
  EXPECT_TRUE(daemon.Running());
  ASSERT_EQ(testing::RunCommand(testing::SourceDir() + "/scripts/pg-scratch start " + PgDir(), &output), 0)
      << output;
  EXPECT_TRUE(WaitFor([&] { return Sample(Metrics(), "seatwatch_up") == 1; }, 30s)) << daemon.Log();
  EXPECT_TRUE(WaitReady(10s));
  EXPECT_TRUE(WaitFor([&] {
    return Sample(Metrics(), "seatwatch_invariant_ok{invariant=\"sold_seat_without_ticket\"}") == 1;
  }, 10s));
  EXPECT_EQ(daemon.Stop(), 0);
  EXPECT_NE(daemon.Log().find("reconnected to database"), std::string::npos);
}

TEST_F(DaemonE2eTest, ReloadKeepsTheOldConfigWhenTheNewOneIsBad) {
  DaemonProcess daemon({"--config", config_}, Env());
  ASSERT_TRUE(WaitReady()) << daemon.Log();
  testing::WriteFile(config_, testing::ReadFile(config_) + "\nbogus_key = 1\n");
  daemon.Signal(SIGHUP);
  ASSERT_TRUE(WaitFor([&] { return daemon.Log().find("reload failed") != std::string::npos; }, 5s));
  EXPECT_NE(daemon.Log().find("bogus_key: unknown key"), std::string::npos);
  EXPECT_TRUE(daemon.Running());
  EXPECT_EQ(HttpGet(port_, "/readyz").status, 200);
  EXPECT_EQ(daemon.Stop(), 0);
}

TEST_F(DaemonE2eTest, OnceExitCodes) {
  {
    DaemonProcess clean({"--config", config_, "--once"}, Env());
    ASSERT_TRUE(clean.WaitExit(30s));
    EXPECT_EQ(clean.Stop(), 0) << clean.Log();
    EXPECT_NE(clean.Log().find("  OK        sold_seat_without_ticket"), std::string::npos) << clean.Log();
  }
  db_.Exec("INSERT INTO tickets VALUES (1, 'A4', 'ghost')");
  {
    DaemonProcess violated({"--config", config_, "--once"}, Env());
    ASSERT_TRUE(violated.WaitExit(30s));
    EXPECT_EQ(violated.Stop(), 1) << violated.Log();
    EXPECT_NE(violated.Log().find("VIOLATED  ticket_without_sold_seat"), std::string::npos) << violated.Log();
    EXPECT_NE(violated.Log().find("ghost"), std::string::npos) << violated.Log();
  }
  {
    DaemonProcess unreachable({"--config", config_, "--once"},
                              {"SEATWATCH_DSN=host=127.0.0.1 port=1 dbname=x connect_timeout=2"});
    ASSERT_TRUE(unreachable.WaitExit(30s));
    EXPECT_EQ(unreachable.Stop(), 3) << unreachable.Log();
  }
}

TEST_F(DaemonE2eTest, ConfigErrorsExitTwoNamingFileLineAndKey) {
  std::string bad = dir_ + "/bad.toml";
  testing::WriteFile(bad, "[database]\nstatement_timeout = \"forever\"\n");
  DaemonProcess daemon({"--config", bad, "--check-config"});
  ASSERT_TRUE(daemon.WaitExit(10s));
  EXPECT_EQ(daemon.Stop(), 2);
  EXPECT_NE(daemon.Log().find(bad + ":2:21: database.statement_timeout:"), std::string::npos) << daemon.Log();

  // A label column the query does not return is found against the database.
  std::string sql = dir_ + "/q.sql";
  testing::WriteFile(sql, "SELECT 1 AS event, 0 AS violations");
  std::string mismatch = dir_ + "/mismatch.toml";
  testing::WriteFile(mismatch, "[[invariant]]\nname = \"x\"\nsql = \"q.sql\"\nlabels = [\"event_id\"]\nvalue = \"violations\"\n");
  DaemonProcess check({"--config", mismatch, "--check-config"}, Env());
  ASSERT_TRUE(check.WaitExit(10s));
  EXPECT_EQ(check.Stop(), 2) << check.Log();
  EXPECT_NE(check.Log().find(mismatch + ":4:10: invariant.labels:"), std::string::npos) << check.Log();

  // The [holds] query's columns are proved too.
  testing::WriteFile(dir_ + "/holds.sql", "SELECT 1 AS holds_active, 2 AS holds_expired");
  std::string holds = dir_ + "/holds.toml";
  testing::WriteFile(holds, "[holds]\nsql = \"holds.sql\"\n");
  DaemonProcess holds_check({"--config", holds, "--check-config"}, Env());
  ASSERT_TRUE(holds_check.WaitExit(10s));
  EXPECT_EQ(holds_check.Stop(), 2) << holds_check.Log();
  EXPECT_NE(holds_check.Log().find(holds + ":1:1: holds.sql"), std::string::npos) << holds_check.Log();
  EXPECT_NE(holds_check.Log().find("holds_expired_oldest_seconds"), std::string::npos) << holds_check.Log();

  DaemonProcess good({"--config", config_, "--check-config"}, Env());
  ASSERT_TRUE(good.WaitExit(10s));
  EXPECT_EQ(good.Stop(), 0) << good.Log();

  DaemonProcess usage({"--bogus"});
  ASSERT_TRUE(usage.WaitExit(10s));
  EXPECT_EQ(usage.Stop(), 2);
}

}  // namespace
}  // namespace seatwatch
