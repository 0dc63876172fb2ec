// The poller against a real database: failures are counted per check while
// the others keep reporting, and concurrent correct traffic never looks like
// a violation.
#include <gtest/gtest.h>

#include <atomic>
#include <pqxx/nontransaction>
#include <pqxx/transaction>
#include <thread>

#include "checks/registry.h"
#include "metrics/snapshot.h"
#include "poll/poller.h"
#include "support/check_status.h"
#include "support/daemon_process.h"
#include "support/scratch_db.h"
#include "support/test_config.h"
#include "support/test_env.h"

namespace seatwatch {
namespace {

using testing::FindCheck;
using testing::ScratchDatabase;

TEST(PollerTest, SlowQueryCountsTimeoutWhileOthersReport) {
  ScratchDatabase db("sw_poller_timeout");
  db.Exec("INSERT INTO seats (event_id, seat, status) VALUES (1, 'A1', 'sold')");
  std::string dir = testing::MakeTempDir("seatwatch-sql");
  testing::WriteFile(dir + "/slow.sql", "SELECT 0 AS violations FROM pg_sleep(2)");
  testing::WriteFile(dir + "/sold.sql",
                     "SELECT event_id, count(*) AS n FROM seats WHERE status = 'sold' GROUP BY 1;\n");
  config::Config config = testing::ConfigFromToml(
      "[database]\nstatement_timeout = \"300ms\"\n[locks]\nenabled = false\n"
      "[[invariant]]\nname = \"slow_one\"\nsql = \"" + dir + "/slow.sql\"\nvalue = \"violations\"\n"
      "[[metric]]\nname = \"sold_seats\"\nsql = \"" + dir + "/sold.sql\"\nlabels = [\"event_id\"]\nvalue = \"n\"\n",
      db.dsn());
  metrics::SnapshotStore store;
  poll::Poller poller(config, checks::BuildChecks(config), store, "test");
  metrics::PollState state = poller.RunAllOnce();
  EXPECT_TRUE(state.database_up);
  const auto& slow = FindCheck(state, "slow_one");
  EXPECT_FALSE(slow.success);
  EXPECT_EQ(slow.errors.at("timeout"), 1u);
  EXPECT_EQ(slow.errors.at("sql"), 0u);
  EXPECT_EQ(slow.output, nullptr);
  const auto& sold = FindCheck(state, "sold_seats");
  ASSERT_TRUE(sold.success) << sold.last_error;
  ASSERT_NE(sold.rendered, nullptr);
  EXPECT_DOUBLE_EQ(testing::Sample(sold.rendered->Text(), "seatwatch_sold_seats{event_id=\"1\"}"), 1);
  EXPECT_TRUE(sold.output->families.empty()) << "families are dropped once rendered";
}

TEST(PollerTest, MissingColumnIsAnSqlFailureNamingTheKey) {
  ScratchDatabase db("sw_poller_columns");
  std::string dir = testing::MakeTempDir("seatwatch-sql");
  testing::WriteFile(dir + "/q.sql", "SELECT 1 AS event, 0 AS violations");
  config::Config config = testing::ConfigFromToml(
      "[locks]\nenabled = false\n[[invariant]]\nname = \"wrong_label\"\nsql = \"" + dir +
          "/q.sql\"\nlabels = [\"event_id\"]\nvalue = \"violations\"\n",
      db.dsn());
  metrics::SnapshotStore store;
  poll::Poller poller(config, checks::BuildChecks(config), store, "test");
  metrics::PollState state = poller.RunAllOnce();
  const auto& check = FindCheck(state, "wrong_label");
  EXPECT_FALSE(check.success);
  EXPECT_EQ(check.errors.at("sql"), 1u);
  EXPECT_NE(check.last_error.find("seatwatch-test.toml:6:10: invariant.labels"), std::string::npos)
      << check.last_error;
  EXPECT_NE(check.last_error.find("\"event_id\""), std::string::npos) << check.last_error;
}

TEST(PollerTest, SharedQueryRunsOncePerPoll) {
  ScratchDatabase db("sw_poller_shared");
  db.Exec("SELECT pg_stat_statements_reset()");
  config::Config config = testing::LoadShippedConfig(db.dsn());
  config.locks.enabled = false;
  config.holds.enabled = false;
  metrics::SnapshotStore store;
  poll::Poller poller(config, checks::BuildChecks(config), store, "test");
  metrics::PollState state = poller.RunAllOnce();
  for (const auto& check : state.checks) EXPECT_TRUE(check.success) << check.name << check.last_error;
  // reconciliation.sql feeds both booking_reconciliation and event_inventory.
  std::string calls = db.Scalar(
      "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements WHERE query LIKE '%seats%' "
      "AND query LIKE '%tickets%' AND query LIKE '%payments%' AND query NOT LIKE '%seatwatch_detail%' "
      "AND query NOT LIKE '%pg_stat_statements%'");
  EXPECT_EQ(calls, "1");
}

// Many correct claim/pay/confirm transactions commit while the poller runs;
// every poll judges one snapshot, so none of them may report a violation.
TEST(PollerTest, ConcurrentCorrectConfirmsNeverLookViolated) {
  ScratchDatabase db("sw_poller_concurrent");
  db.Exec("INSERT INTO seats (event_id, seat) SELECT e, 'S' || n FROM generate_series(1, 4) e, "
          "generate_series(1, 150) n");
  config::Config config = testing::LoadShippedConfig(db.dsn());
  config.locks.enabled = false;
  std::atomic<bool> done{false};
  std::atomic<int> confirmed{0};
  std::vector<std::thread> buyers;
  for (int worker = 0; worker < 4; ++worker) {
    buyers.emplace_back([&, worker] {
      pqxx::connection connection(db.dsn());
      for (int n = 1; n <= 150; ++n) {
        std::string seat = "S" + std::to_string(n);
        // One seat per fan: the limit of four per fan is not what this test is about.
        std::string fan = "fan-" + std::to_string(worker) + "-" + std::to_string(n);
        std::string key = "k-" + std::to_string(worker) + "-" + seat;
        int event_id = worker + 1;
        pqxx::work claim(connection);
        auto held = claim.exec_params(
            "UPDATE seats SET status = 'held', holder = $3, hold_expires_at = now() + "
            "interval '10 minutes', version = version + 1 WHERE event_id = $1 AND seat = $2 "
            "AND (status = 'free' OR (status = 'held' AND hold_expires_at <= now())) RETURNING seat",
            event_id, seat, fan);
        claim.exec_params("INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents) "
                          "VALUES ($1, $2, $3, $4, 5000) ON CONFLICT (idempotency_key) DO NOTHING",
                          key, event_id, seat, fan);
        claim.commit();
        if (held.size() != 1) continue;
        pqxx::work confirm(connection);
        auto ticket = confirm.exec_params(
            "WITH sold AS (UPDATE seats SET status = 'sold', hold_expires_at = NULL, version = "
            "version + 1 WHERE event_id = $1 AND seat = $2 AND status = 'held' AND holder = $3 "
            "AND hold_expires_at > now() RETURNING event_id, seat, holder) "
            "INSERT INTO tickets (event_id, seat, fan) SELECT event_id, seat, holder FROM sold "
            "RETURNING seat",
            event_id, seat, fan);
        if (ticket.size() == 1) {
          confirm.exec_params("UPDATE payments SET status = 'confirmed' WHERE idempotency_key = $1", key);
          confirm.commit();
          ++confirmed;
        }
      }
    });
  }
  int polls = 0;
  std::thread stopper([&] {
    for (auto& buyer : buyers) buyer.join();
    done = true;
  });
  while (!done || polls < 3) {
    metrics::SnapshotStore store;
    poll::Poller poller(config, checks::BuildChecks(config), store, "test");
    metrics::PollState state = poller.RunAllOnce();
    ++polls;
    for (const auto& check : state.checks) {
      ASSERT_TRUE(check.success) << check.name << ": " << check.last_error;
      for (const auto& invariant : check.output->invariants) {
        EXPECT_TRUE(invariant.ok()) << invariant.name << " violated at poll " << polls;
      }
    }
  }
  stopper.join();
  EXPECT_EQ(confirmed.load(), 600);
  EXPECT_GE(polls, 3);
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM tickets"), "600");
}

}  // namespace
}  // namespace seatwatch

namespace seatwatch {
namespace {

// A detail query can cost as much as the check: it runs again only when the
// violations change.
TEST(PollerTest, DetailQueryRunsOnlyWhenViolationsChange) {
  ScratchDatabase db("sw_poller_detail");
  db.Exec("INSERT INTO seats (event_id, seat, status, holder) VALUES (1, 'A1', 'sold', 'x'), "
          "(1, 'A2', 'free', NULL)");
  config::Config config = testing::LoadShippedConfig(db.dsn());
  config.locks.enabled = false;
  config.holds.enabled = false;
  metrics::SnapshotStore store;
  poll::Poller poller(config, checks::BuildChecks(config), store, "test");
  db.Exec("SELECT pg_stat_statements_reset()");
  auto detail_calls = [&] {
    return db.Scalar("SELECT coalesce(sum(calls), 0) FROM pg_stat_statements WHERE query LIKE "
                     "'%seatwatch_detail%' AND query NOT LIKE '%pg_stat_statements%' "
                     "AND query NOT LIKE 'SAVEPOINT%' AND query NOT LIKE 'RELEASE%'");
  };
  metrics::PollState first = poller.RunAllOnce();
  metrics::PollState second = poller.RunAllOnce();
  EXPECT_EQ(detail_calls(), "1");
  for (const auto* state : {&first, &second}) {
    const auto& check = FindCheck(*state, "booking_reconciliation");
    ASSERT_TRUE(check.success) << check.last_error;
    bool seen = false;
    for (const auto& invariant : check.output->invariants) {
      if (invariant.name != "sold_seat_without_ticket") continue;
      seen = true;
      ASSERT_TRUE(invariant.detail.has_value());
      ASSERT_EQ(invariant.detail->rows.size(), 1u);
    }
    EXPECT_TRUE(seen);
  }
  db.Exec("UPDATE seats SET status = 'sold', holder = 'y' WHERE seat = 'A2'");
  metrics::PollState third = poller.RunAllOnce();
  EXPECT_EQ(detail_calls(), "2");
  for (const auto& invariant : FindCheck(third, "booking_reconciliation").output->invariants) {
    if (invariant.name == "sold_seat_without_ticket") {
      EXPECT_EQ(invariant.detail->rows.size(), 2u);
    }
  }
}

// A detail query gets the offending keys first ($1: the event_ids of the
// violation rows), then the entry's params, so it can read only those events.
TEST(PollerTest, DetailQueryReceivesTheOffendingKeysThenParams) {
  ScratchDatabase db("sw_poller_detail_keys");
  db.Exec("INSERT INTO seats (event_id, seat, status, holder) VALUES "
          "(7, 'A1', 'sold', 'x'), (3, 'B2', 'sold', 'y'), (3, 'B3', 'sold', 'z'), "
          "(5, 'C1', 'sold', 'w')");
  db.Exec("INSERT INTO tickets (event_id, seat, fan) VALUES (5, 'C1', 'w')");
  db.Exec("INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents, status) "
          "VALUES ('k5', 5, 'C1', 'w', 100, 'confirmed'), ('k7', 7, 'A1', 'x', 100, "
          "'confirmed'), ('k3b', 3, 'B2', 'y', 100, 'confirmed'), ('k3c', 3, 'B3', 'z', 100, "
          "'confirmed')");
  // The booking pack written by hand: its detail queries get the fan limit
  // (params = [4]) after the keys.
  config::Config config = testing::ConfigFromToml(
      "[locks]\nenabled = false\n[holds]\nenabled = false\n"
      "[[invariant]]\nname = \"booking_reconciliation\"\n"
      "sql = \"queries/booking/reconciliation.sql\"\ninvariant_column = \"invariant\"\n"
      "invariants = [\"sold_seat_without_ticket\", \"ticket_without_sold_seat\", "
      "\"confirmed_payment_without_ticket\", \"ticket_without_confirmed_payment\", "
      "\"double_confirmed_payment\", \"fan_over_limit\"]\n"
      "labels = [\"event_id\"]\nvalue = \"violations\"\nparams = [4]\n",
      db.dsn());
  for (auto& entry : config.queries) {
    if (entry.name != "booking_reconciliation") continue;
    entry.detail_sql["sold_seat_without_ticket"] =
        "SELECT e AS event_id, $2::int AS fan_limit FROM unnest($1::int[]) AS e ORDER BY e";
  }
  metrics::SnapshotStore store;
  poll::Poller poller(config, checks::BuildChecks(config), store, "test");
  metrics::PollState state = poller.RunAllOnce();
  const auto& check = FindCheck(state, "booking_reconciliation");
  ASSERT_TRUE(check.success) << check.last_error;
  bool seen = false;
  for (const auto& invariant : check.output->invariants) {
    if (invariant.name != "sold_seat_without_ticket") continue;
    seen = true;
    ASSERT_EQ(invariant.violations.size(), 2u);
    ASSERT_TRUE(invariant.detail.has_value());
    EXPECT_EQ(invariant.detail->error, "");
    using Row = std::vector<std::optional<std::string>>;
    EXPECT_EQ(invariant.detail->rows, (std::vector<Row>{{"3", "4"}, {"7", "4"}}));
  }
  EXPECT_TRUE(seen);
}

}  // namespace
}  // namespace seatwatch
