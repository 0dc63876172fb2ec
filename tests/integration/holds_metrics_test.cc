// The [holds] check against a real database: the backlog gauges match a
// seeded mix of active, expired and sold seats, judged by the database's
// clock, and a query that does not fit the section is a clear error.
#include <gtest/gtest.h>

#include <cmath>
#include <thread>

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
using testing::ScratchDatabase;

const metrics::CheckStatus& HoldsStatus(const metrics::PollState& state) {
  for (const auto& check : state.checks) {
    if (check.name == "holds") return check;
  }
  throw std::runtime_error("no holds check");
}

double Gauge(const metrics::CheckStatus& status, const std::string& name) {
  if (!status.rendered) return std::nan("");
  return testing::Sample(status.rendered->Text(), name);
}

config::Config HoldsConfig(const std::string& dsn, const std::string& sql_path) {
  return testing::ConfigFromToml("[locks]\nenabled = false\n[holds]\nsql = \"" + sql_path + "\"\n",
                                 dsn);
}

metrics::PollState PollOnce(const config::Config& config) {
  metrics::SnapshotStore store;
  poll::Poller poller(config, checks::BuildChecks(config), store, "test");
  return poller.RunAllOnce();
}

// Every time below is relative to the database's now(), so the expected
// counts do not depend on the test machine's clock.
void SeedMix(const ScratchDatabase& db) {
  db.Exec(R"(
INSERT INTO seats (event_id, seat) SELECT e, 'S' || n FROM generate_series(1, 3) e, generate_series(1, 20) n;
-- Active holds: 3 in event 1, 1 in event 2.
UPDATE seats SET status = 'held', holder = 'fan-' || event_id || seat,
                 hold_expires_at = now() + interval '10 minutes'
 WHERE (event_id = 1 AND seat IN ('S1', 'S2', 'S3')) OR (event_id = 2 AND seat = 'S1');
-- Expired holds: 4, the oldest expired 2 hours ago.
UPDATE seats SET status = 'held', holder = 'fan-' || event_id || seat,
                 hold_expires_at = now() - interval '2 hours'
 WHERE event_id = 2 AND seat = 'S2';
UPDATE seats SET status = 'held', holder = 'fan-' || event_id || seat,
                 hold_expires_at = now() - interval '5 seconds'
 WHERE (event_id = 1 AND seat IN ('S4', 'S5')) OR (event_id = 3 AND seat = 'S1');
-- Sold seats, one with a stale expiry in the past: never part of any count.
UPDATE seats SET status = 'sold', holder = 'buyer-' || seat, hold_expires_at = NULL
 WHERE event_id = 3 AND seat IN ('S2', 'S3');
UPDATE seats SET status = 'sold', holder = 'buyer-' || seat, hold_expires_at = now() - interval '1 day'
 WHERE event_id = 3 AND seat = 'S4';
INSERT INTO tickets (event_id, seat, fan)
SELECT event_id, seat, holder FROM seats WHERE status = 'sold';
-- Payments: confirmed for the sales; started ones for an active hold of the
-- same fan (fine), for an expired hold (lapsed), for a seat now held by
-- another fan (lapsed) and for a seat that is free again (lapsed).
INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents, status)
SELECT 'sold-' || seat, event_id, seat, holder, 5000, 'confirmed' FROM seats WHERE status = 'sold';
INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents) VALUES
  ('k-active', 1, 'S1', 'fan-1S1', 5000),
  ('k-expired', 1, 'S4', 'fan-1S4', 5000),
  ('k-other-fan', 1, 'S2', 'someone-else', 5000),
  ('k-free', 1, 'S10', 'fan-gone', 5000);
)");
}

TEST(HoldsMetricsTest, MatchASeededMixByTheDatabaseClock) {
  ScratchDatabase db("sw_holds_mix");
  SeedMix(db);
  config::Config config =
      HoldsConfig(db.dsn(), testing::SourceDir() + "/queries/booking/holds.sql");
  metrics::PollState state = PollOnce(config);
  const auto& holds = HoldsStatus(state);
  ASSERT_TRUE(holds.success) << holds.last_error;
  EXPECT_EQ(Gauge(holds, "seatwatch_holds_active"), 4);
  EXPECT_EQ(Gauge(holds, "seatwatch_holds_expired"), 4);
  double oldest = Gauge(holds, "seatwatch_holds_expired_oldest_seconds");
  EXPECT_GE(oldest, 7200);
  EXPECT_LT(oldest, 7200 + 60);
  EXPECT_EQ(Gauge(holds, "seatwatch_payments_lapsed"), 3);
}

TEST(HoldsMetricsTest, NoHoldsMeansZeroesNotGaps) {
  ScratchDatabase db("sw_holds_empty");
  db.Exec("INSERT INTO seats (event_id, seat) VALUES (1, 'A1')");
  metrics::PollState state =
      PollOnce(HoldsConfig(db.dsn(), testing::SourceDir() + "/queries/booking/holds.sql"));
  const auto& holds = HoldsStatus(state);
  ASSERT_TRUE(holds.success) << holds.last_error;
  EXPECT_EQ(Gauge(holds, "seatwatch_holds_active"), 0);
  EXPECT_EQ(Gauge(holds, "seatwatch_holds_expired"), 0);
  EXPECT_EQ(Gauge(holds, "seatwatch_holds_expired_oldest_seconds"), 0);
  EXPECT_EQ(Gauge(holds, "seatwatch_payments_lapsed"), 0);
}

TEST(HoldsMetricsTest, AHoldMovesFromActiveToExpiredWhenTheDatabaseSaysSo) {
  ScratchDatabase db("sw_holds_expiry");
  db.Exec(
      "INSERT INTO seats (event_id, seat, status, holder, hold_expires_at) "
      "VALUES (1, 'A1', 'held', 'fan-a', now() + interval '1500 milliseconds')");
  config::Config config =
      HoldsConfig(db.dsn(), testing::SourceDir() + "/queries/booking/holds.sql");
  const auto first = PollOnce(config);
  EXPECT_EQ(Gauge(HoldsStatus(first), "seatwatch_holds_active"), 1);
  EXPECT_EQ(Gauge(HoldsStatus(first), "seatwatch_holds_expired"), 0);
  // Wait until the database itself says the hold has expired.
  ASSERT_TRUE(testing::WaitFor(
      [&] { return db.Scalar("SELECT hold_expires_at <= now() FROM seats") == "t"; }, 10s));
  const auto second = PollOnce(config);
  EXPECT_EQ(Gauge(HoldsStatus(second), "seatwatch_holds_active"), 0);
  EXPECT_EQ(Gauge(HoldsStatus(second), "seatwatch_holds_expired"), 1);
  EXPECT_GE(Gauge(HoldsStatus(second), "seatwatch_holds_expired_oldest_seconds"), 0);
}

TEST(HoldsMetricsTest, AMissingColumnIsAClearError) {
  ScratchDatabase db("sw_holds_columns");
  std::string dir = testing::MakeTempDir("seatwatch-sql");
  testing::WriteFile(dir + "/holds.sql",
                     "SELECT 1 AS holds_active, 2 AS holds_expired, 0 AS payments_lapsed;\n");
  metrics::PollState state = PollOnce(HoldsConfig(db.dsn(), dir + "/holds.sql"));
  const auto& holds = HoldsStatus(state);
  EXPECT_FALSE(holds.success);
  EXPECT_EQ(holds.errors.at("sql"), 1u);
  EXPECT_EQ(holds.output, nullptr);
  EXPECT_NE(holds.last_error.find("seatwatch-test.toml:3:1: holds.sql: " + dir + "/holds.sql"),
            std::string::npos)
      << holds.last_error;
  EXPECT_NE(holds.last_error.find("\"holds_expired_oldest_seconds\" is not in the query's result"),
            std::string::npos)
      << holds.last_error;
}

}  // namespace
}  // namespace seatwatch
