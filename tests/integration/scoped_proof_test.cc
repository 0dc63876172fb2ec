// The proof of hand-written scoped_sql through the built binary, against the
// scratch PostgreSQL: --check-config runs each incremental entry's
// scoped_sql with no keys (no rows allowed) and with keys sampled from its
// sql's rows (exactly sql's rows of those keys), and refuses (exit 2,
// file:line:col of scoped_sql, the key) one that forgets its key filter or
// computes something else; the daemon refuses to start on such an entry
// when the database answers, starts as before when it does not (refused,
// or stalled past the proof's budget), and a
// SIGHUP to such an entry keeps the running configuration.
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "support/daemon_process.h"
#include "support/daemon_test.h"
#include "support/http_client.h"
#include "support/stall_proxy.h"
#include "support/test_config.h"
#include "support/test_env.h"

namespace seatwatch {
namespace {

using namespace std::chrono_literals;
using testing::DaemonProcess;
using testing::Sample;
using testing::WaitFor;

// Seats held per event, as the full pass reads them.
constexpr const char* kHeldSql = testing::kHeldSeatsSql;

// Right: the same rows for the events of $1 only.
constexpr const char* kGoodScopedSql =
    "SELECT event_id, count(*) FILTER (WHERE status = 'held') AS held\n"
    "  FROM seats WHERE event_id = ANY ($1::int[]) GROUP BY event_id\n";

// The filter only in the join: every event comes back, the others with 0.
constexpr const char* kUnfilteredScopedSql =
    "SELECT e.event_id, count(s.seat) FILTER (WHERE s.status = 'held') AS held\n"
    "  FROM (SELECT DISTINCT event_id FROM seats) e\n"
    "  LEFT JOIN seats s ON s.event_id = e.event_id AND s.event_id = ANY ($1::int[])\n"
    " GROUP BY e.event_id\n";

// Filtered, but it counts only half of the held seats.
constexpr const char* kHalfScopedSql =
    "SELECT event_id, count(*) FILTER (WHERE status = 'held' AND seat LIKE '%0') AS held\n"
    "  FROM seats WHERE event_id = ANY ($1::int[]) GROUP BY event_id\n";

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class ScopedProofTest : public testing::DaemonTest {
 protected:
  ScopedProofTest() : DaemonTest("sw_scoped_proof", "seatwatch-scoped-proof") {
    // Events 1..12 with 2e seats each: every tenth-ish seat sold with its
    // ticket and confirmed payment, every odd one held (half of them
    // expired), and event 5 with a sold seat without a ticket.
    db_.Exec(
        "INSERT INTO seats (event_id, seat, status, holder, hold_expires_at) "
        "SELECT e, 'S' || n, CASE WHEN n % 10 = 4 THEN 'sold' WHEN n % 2 = 1 THEN 'held' "
        "ELSE 'free' END, CASE WHEN n % 10 = 4 OR n % 2 = 1 THEN 'fan' || (n % 3) END, "
        "CASE WHEN n % 2 = 1 THEN now() + (CASE WHEN n % 4 = 1 THEN 1 ELSE -1 END) * "
        "interval '1 hour' END FROM generate_series(1, 12) e, generate_series(1, 2 * e) n");
    db_.Exec("INSERT INTO tickets (event_id, seat, fan) SELECT event_id, seat, holder FROM seats "
             "WHERE status = 'sold' AND NOT (event_id = 5 AND seat = 'S4')");
    db_.Exec("INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents, status) "
             "SELECT 'k' || event_id || seat, event_id, seat, holder, 5000, 'confirmed' "
             "FROM seats WHERE status = 'sold'");
  }

  // A config of one hand-written incremental [[invariant]] whose scoped_sql
  // is `scoped`, then `extra` TOML; its path in config_, the line of
  // scoped_sql in *line.
  void WriteEntryConfig(const std::string& scoped, int* line = nullptr,
                        const std::string& extra = "") {
    testing::WriteFile(dir_ + "/held.sql", kHeldSql);
    testing::WriteFile(dir_ + "/held.scoped.sql", scoped);
    std::string toml = "[http]\nlisten = \"127.0.0.1:" + std::to_string(port_) +
                       "\"\n\n[poll]\ninterval = \"1s\"\n\n[locks]\nenabled = false\n\n" +
                       testing::kHeldSeatsEntry;
    if (line) *line = static_cast<int>(std::count(toml.begin(), toml.end(), '\n')) + 1;
    toml += "scoped_sql = \"held.scoped.sql\"\n" + extra;
    config_ = dir_ + "/seatwatch.toml";
    testing::WriteFile(config_, toml);
  }

  // file:line:col: invariant.scoped_sql: of the entry written above.
  std::string Where(int line) const {
    return config_ + ":" + std::to_string(line) + ":14: invariant.scoped_sql: ";
  }

  // Runs the binary to its end; returns the exit code, the output in *log.
  int Run(const std::vector<std::string>& args, std::string* log,
          const std::vector<std::string>& env = {}) {
    DaemonProcess process(args, env.empty() ? Env() : env);
    bool ended = process.WaitExit(60s);
    *log = process.Log();
    EXPECT_TRUE(ended) << "seatwatch did not end within 60s:\n" << *log;
    return process.Stop();
  }
};

TEST_F(ScopedProofTest, TheShippedIncrementalEntriesAreProved) {
  UseShippedConfig();
  std::string log;
  ASSERT_EQ(Run({"--config", config_, "--check-config"}, &log), 0) << log;
  // Events 1..12 have rows: five of them, from the first to the last.
  EXPECT_TRUE(Has(log, "invariant booking_reconciliation: scoped_sql returns no rows for no keys "
                       "and sql's rows for event_id 1, 3, 6, 9, 12\n"))
      << log;
  EXPECT_TRUE(Has(log, "metric event_inventory: scoped_sql returns no rows for no keys and sql's "
                       "rows for event_id 1, 3, 6, 9, 12\n"))
      << log;
  EXPECT_FALSE(Has(log, "warning:")) << log;
  EXPECT_TRUE(Has(log, "every query runs and returns its configured columns")) << log;
}

TEST_F(ScopedProofTest, CheckConfigRefusesAScopedSqlWithoutItsKeyFilter) {
  int line = 0;
  WriteEntryConfig(kGoodScopedSql, &line);
  std::string log;
  ASSERT_EQ(Run({"--config", config_, "--check-config"}, &log), 0) << log;
  EXPECT_TRUE(Has(log, "invariant held_seats: scoped_sql returns no rows for no keys and sql's "
                       "rows for event_id 1, 3, 6, 9, 12\n"))
      << log;

  WriteEntryConfig(kUnfilteredScopedSql);
  EXPECT_EQ(Run({"--config", config_, "--check-config"}, &log), 2) << log;
  EXPECT_TRUE(Has(log, "seatwatch: " + Where(line) +
                           "with no keys ($1 = '{}') it returns 12 rows (the first of event_id = "))
      << log;
  EXPECT_TRUE(Has(log, "it must return only rows of the keys in $1")) << log;
  EXPECT_FALSE(Has(log, "every query runs")) << log;
}

TEST_F(ScopedProofTest, CheckConfigRefusesAScopedSqlThatCountsOnlyHalf) {
  int line = 0;
  WriteEntryConfig(kHalfScopedSql, &line);
  std::string log;
  EXPECT_EQ(Run({"--config", config_, "--check-config"}, &log), 2) << log;
  // Event 1 (2 seats: S1 held, S2 free) has 1 held seat, of which the
  // scoped query counts none (no seat of it ends in 0).
  EXPECT_TRUE(Has(log, "seatwatch: " + Where(line) +
                           "for event_id = '1' it returns 1 row where sql returns 1 on the same "
                           "snapshot; sql's row (event_id = '1', held = '1') is missing; its row "
                           "(event_id = '1', held = '0') is not one of sql's\n"))
      << log;
  EXPECT_FALSE(Has(log, "every query runs")) << log;
}

TEST_F(ScopedProofTest, TheDaemonRefusesToStartOnAScopedSqlProvedWrong) {
  int line = 0;
  WriteEntryConfig(kUnfilteredScopedSql, &line);
  std::string log;
  EXPECT_EQ(Run({"--config", config_}, &log), 2) << log;
  EXPECT_TRUE(Has(log, Where(line) + "with no keys ($1 = '{}') it returns 12 rows")) << log;
  EXPECT_TRUE(Has(log, "refusing to start: a scoped_sql was proved wrong")) << log;
  EXPECT_FALSE(Has(log, "seatwatch started")) << log;
  EXPECT_EQ(testing::HttpGet(port_, "/healthz").status, 0) << "nothing listens";

  // A database that does not answer proves nothing and refuses nothing.
  std::string closed = "host=127.0.0.1 port=" + std::to_string(testing::FreePort()) +
                       " dbname=" + db_.name() + " connect_timeout=2";
  DaemonProcess daemon({"--config", config_}, {"SEATWATCH_DSN=" + closed});
  ASSERT_TRUE(WaitFor([&] { return testing::HttpGet(port_, "/healthz").status != 0; }, 20s))
      << daemon.Log();
  EXPECT_TRUE(daemon.Running()) << daemon.Log();
  EXPECT_TRUE(Has(daemon.Log(), "scoped_sql not proved: the checks database did not answer"))
      << daemon.Log();
  // "seatwatch started" is logged just after the listener opens.
  EXPECT_TRUE(WaitFor([&] { return Has(daemon.Log(), "seatwatch started"); }, 10s))
      << daemon.Log();
  EXPECT_EQ(daemon.Stop(), 0) << daemon.Log();
}

// A database behind a middlebox that holds every connection answers
// nothing: the proof gives up after kProofBudget (10 s), even with a
// connect_timeout far longer, and the daemon starts unproved, serving
// /healthz and its lanes reporting the stall, as it does without the proof.
TEST_F(ScopedProofTest, AStalledDatabaseDoesNotHoldTheStart) {
  WriteEntryConfig(kGoodScopedSql, nullptr, "\n[database]\nconnect_timeout = \"300s\"\n");
  testing::StallProxy proxy(testing::ScratchTcpPort());
  proxy.Stall();
  std::string stalled = "host=127.0.0.1 port=" + std::to_string(proxy.port()) +
                        " user=postgres dbname=" + db_.name();
  DaemonProcess daemon({"--config", config_}, {"SEATWATCH_DSN=" + stalled});
  ASSERT_TRUE(WaitFor([&] { return testing::HttpGet(port_, "/healthz").status != 0; }, 40s))
      << daemon.Log();
  EXPECT_TRUE(Has(daemon.Log(), "scoped_sql not proved: the checks database did not answer in "
                                "time"))
      << daemon.Log();
  EXPECT_TRUE(Has(daemon.Log(), "waited_seconds=10")) << daemon.Log();
  // "seatwatch started" is logged just after the listener opens.
  EXPECT_TRUE(WaitFor([&] { return Has(daemon.Log(), "seatwatch started"); }, 10s))
      << daemon.Log();
  EXPECT_FALSE(Has(daemon.Log(), "scoped_sql proved")) << daemon.Log();
  EXPECT_EQ(daemon.Stop(), 0) << daemon.Log();
}

TEST_F(ScopedProofTest, ReloadToAScopedSqlProvedWrongKeepsTheRunningConfig) {
  int line = 0;
  WriteEntryConfig(kGoodScopedSql, &line);
  DaemonProcess daemon({"--config", config_}, Env());
  ASSERT_TRUE(WaitReady()) << daemon.Log();
  ASSERT_TRUE(Has(daemon.Log(), "scoped_sql proved")) << daemon.Log();
  ASSERT_TRUE(WaitFor([&] { return Sample(Metrics(), "seatwatch_check_success{check=\"held_seats\"}") == 1; },
                      10s))
      << daemon.Log();

  // The new config adds a check, and its scoped_sql counts only half.
  const std::string marker =
      "\n[[metric]]\nname = \"reload_marker\"\nsql = \"marker.sql\"\nvalue = \"v\"\n";
  testing::WriteFile(dir_ + "/marker.sql", "SELECT 1 AS v\n");
  WriteEntryConfig(kHalfScopedSql, nullptr, marker);
  daemon.Signal(SIGHUP);
  ASSERT_TRUE(WaitFor([&] { return Has(daemon.Log(), "reload refused"); }, 20s)) << daemon.Log();
  EXPECT_TRUE(Has(daemon.Log(), "keeping the running configuration")) << daemon.Log();
  EXPECT_TRUE(Has(daemon.Log(), Where(line) + "for event_id = '1' it returns 1 row")) << daemon.Log();
  EXPECT_TRUE(daemon.Running()) << daemon.Log();
  double before = Sample(Metrics(), "seatwatch_last_poll_timestamp_seconds");
  EXPECT_TRUE(WaitFor([&] { return Sample(Metrics(), "seatwatch_last_poll_timestamp_seconds") > before; }, 10s))
      << daemon.Log();
  std::string text = Metrics();
  EXPECT_EQ(Sample(text, "seatwatch_check_success{check=\"held_seats\"}"), 1) << text;
  EXPECT_TRUE(std::isnan(Sample(text, "seatwatch_check_success{check=\"reload_marker\"}"))) << text;

  // Repaired, the same reload is taken.
  WriteEntryConfig(kGoodScopedSql, nullptr, marker);
  daemon.Signal(SIGHUP);
  EXPECT_TRUE(WaitFor([&] {
    return Sample(Metrics(), "seatwatch_check_success{check=\"reload_marker\"}") == 1;
  }, 20s)) << daemon.Log();
  EXPECT_EQ(daemon.Stop(), 0) << daemon.Log();
}

}  // namespace
}  // namespace seatwatch
