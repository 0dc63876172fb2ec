// The shipped booking pack against a real database: each invariant reports
// exactly the violations a test injects, and nothing on clean data.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>

#include "checks/registry.h"
#include "metrics/snapshot.h"
#include "poll/poller.h"
#include "support/scratch_db.h"
#include "support/test_config.h"

namespace seatwatch {
namespace {

using testing::ScratchDatabase;

// invariant -> {event_id -> violations}; plus every invariant's ok flag.
struct Verdict {
  std::map<std::string, std::map<std::string, double>> violations;
  std::map<std::string, bool> ok;
  std::map<std::string, std::map<std::string, double>> inventory;  // event -> kind -> count
  std::map<std::string, std::vector<std::vector<std::optional<std::string>>>> detail;
  bool all_succeeded = true;
};

Verdict Judge(const ScratchDatabase& db) {
  config::Config config = testing::LoadShippedConfig(db.dsn());
  config.locks.enabled = false;
  metrics::SnapshotStore store;
  poll::Poller poller(config, checks::BuildChecks(config), store, "test");
  metrics::PollState state = poller.RunAllOnce();
  Verdict verdict;
  for (const auto& check : state.checks) {
    if (!check.success) {
      verdict.all_succeeded = false;
      ADD_FAILURE() << check.name << " failed: " << check.last_error;
      continue;
    }
    for (const auto& invariant : check.output->invariants) {
      verdict.ok[invariant.name] = invariant.ok();
      for (const auto& v : invariant.violations) {
        verdict.violations[invariant.name][v.labels.at(0).value] += v.value;
      }
      if (invariant.detail) verdict.detail[invariant.name] = invariant.detail->rows;
    }
    if (!check.rendered) continue;
    static const std::regex kInventory(
        R"re(^seatwatch_event_inventory\{event_id="([^"]*)",kind="([^"]*)"\} (\S+)$)re");
    std::istringstream lines(check.rendered->Text());
    std::string line;
    std::smatch m;
    while (std::getline(lines, line)) {
      if (std::regex_match(line, m, kInventory)) {
        verdict.inventory[m[1]][m[2]] = std::stod(m[3]);
      }
    }
  }
  return verdict;
}

void ExpectOnly(const Verdict& verdict, const std::string& invariant,
                const std::map<std::string, double>& expected) {
  EXPECT_EQ(verdict.ok.size(), 6u);
  for (const auto& [name, ok] : verdict.ok) {
    if (name == invariant) {
      EXPECT_FALSE(ok) << name << " should be violated";
      ASSERT_EQ(verdict.violations.count(name), 1u) << name;
      EXPECT_EQ(verdict.violations.at(name), expected) << name;
      EXPECT_EQ(verdict.detail.count(name), 1u) << name << " should carry detail rows";
    } else {
      EXPECT_TRUE(ok) << name << " should hold";
    }
  }
}

class BookingInvariantsTest : public ::testing::Test {
 protected:
  BookingInvariantsTest() : db_("sw_booking_invariants") {
    db_.Exec(
        "INSERT INTO seats (event_id, seat) SELECT e, 'A' || n FROM generate_series(1, 3) e, "
        "generate_series(1, 10) n");
  }

  // The design's correct flow: claim with the conditional UPDATE, record the
  // payment by idempotency key, confirm with the ticket-inserting CAS.
  void CorrectSale(int event_id, const std::string& seat, const std::string& fan) {
    std::string key = "chk-" + std::to_string(event_id) + "-" + seat;
    std::string where = "event_id = " + std::to_string(event_id) + " AND seat = '" + seat + "'";
    db_.Exec("UPDATE seats SET status = 'held', holder = '" + fan +
             "', hold_expires_at = now() + interval '10 minutes', version = version + 1 WHERE " +
             where + " AND (status = 'free' OR (status = 'held' AND hold_expires_at <= now()))");
    db_.Exec("INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents) VALUES ('" +
             key + "', " + std::to_string(event_id) + ", '" + seat + "', '" + fan +
             "', 8000) ON CONFLICT (idempotency_key) DO NOTHING");
    db_.Exec("BEGIN; WITH sold AS (UPDATE seats SET status = 'sold', hold_expires_at = NULL, "
             "version = version + 1 WHERE " + where + " AND status = 'held' AND holder = '" + fan +
             "' AND hold_expires_at > now() RETURNING event_id, seat, holder) "
             "INSERT INTO tickets (event_id, seat, fan) SELECT event_id, seat, holder FROM sold; "
             "UPDATE payments SET status = 'confirmed' WHERE idempotency_key = '" + key + "'; COMMIT");
  }

  ScratchDatabase db_;
};

TEST_F(BookingInvariantsTest, CleanFlowHasNoViolationsAndRightInventory) {
  CorrectSale(1, "A1", "fan-a");
  CorrectSale(1, "A2", "fan-b");
  // An active hold with its payment started, and a lapsed hold.
  db_.Exec("UPDATE seats SET status = 'held', holder = 'fan-c', hold_expires_at = now() + "
           "interval '5 minutes' WHERE event_id = 1 AND seat = 'A3'");
  db_.Exec("INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents) VALUES "
           "('chk-c', 1, 'A3', 'fan-c', 8000)");
  db_.Exec("UPDATE seats SET status = 'held', holder = 'fan-d', hold_expires_at = now() - "
           "interval '1 minute' WHERE event_id = 2 AND seat = 'A1'");
  Verdict verdict = Judge(db_);
  ASSERT_TRUE(verdict.all_succeeded);
  EXPECT_EQ(verdict.ok.size(), 6u);
  for (const auto& [name, ok] : verdict.ok) EXPECT_TRUE(ok) << name;
  auto& e1 = verdict.inventory["1"];
  EXPECT_EQ(e1["seats_sold"], 2);
  EXPECT_EQ(e1["tickets"], 2);
  EXPECT_EQ(e1["payments_confirmed"], 2);
  EXPECT_EQ(e1["payments_started"], 1);
  EXPECT_EQ(e1["seats_held"], 1);
  EXPECT_EQ(e1["seats_free"], 7);
  EXPECT_EQ(verdict.inventory["2"]["seats_held_expired"], 1);
  EXPECT_EQ(verdict.inventory["3"]["seats_free"], 10);
}

TEST_F(BookingInvariantsTest, SoldSeatWithoutTicket) {
  CorrectSale(1, "A1", "fan-a");
  // An admin script sells seats directly.
  db_.Exec("UPDATE seats SET status = 'sold', holder = 'fan-x' WHERE event_id = 2 AND seat IN ('A1', 'A2')");
  ExpectOnly(Judge(db_), "sold_seat_without_ticket", {{"2", 2}});
}

TEST_F(BookingInvariantsTest, TicketWithoutSoldSeat) {
  CorrectSale(1, "A1", "fan-a");
  CorrectSale(1, "A2", "fan-b");
  // A ticket for a seat still free, with a confirmed payment so that only
  // this invariant is broken; and a sold seat whose ticket names another fan.
  db_.Exec("INSERT INTO tickets VALUES (3, 'A5', 'fan-z')");
  db_.Exec("INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents, status) "
           "VALUES ('chk-z', 3, 'A5', 'fan-z', 100, 'confirmed')");
  db_.Exec("UPDATE seats SET holder = 'fan-q' WHERE event_id = 1 AND seat = 'A2'");
  ExpectOnly(Judge(db_), "ticket_without_sold_seat", {{"1", 1}, {"3", 1}});
}

TEST_F(BookingInvariantsTest, ConfirmedPaymentWithoutTicket) {
  CorrectSale(2, "A1", "fan-a");
  // The hold lapsed during payment and the confirm returned 0 rows, but the
  // code marked the payment confirmed anyway.
  db_.Exec("INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents, status) "
           "VALUES ('chk-late', 2, 'A2', 'fan-late', 8000, 'confirmed')");
  ExpectOnly(Judge(db_), "confirmed_payment_without_ticket", {{"2", 1}});
}

TEST_F(BookingInvariantsTest, TicketWithoutConfirmedPayment) {
  CorrectSale(1, "A1", "fan-a");
  db_.Exec("UPDATE payments SET status = 'started' WHERE event_id = 1 AND seat = 'A1'");
  ExpectOnly(Judge(db_), "ticket_without_confirmed_payment", {{"1", 1}});
}

TEST_F(BookingInvariantsTest, DoubleConfirmedPayment) {
  CorrectSale(3, "A1", "fan-a");
  // A retried checkout with a fresh idempotency key, charged and confirmed twice.
  db_.Exec("INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents, status) "
           "VALUES ('chk-dup1', 3, 'A1', 'fan-a', 8000, 'confirmed'), "
           "('chk-dup2', 3, 'A1', 'fan-a', 8000, 'confirmed')");
  ExpectOnly(Judge(db_), "double_confirmed_payment", {{"3", 2}});
}

TEST_F(BookingInvariantsTest, FanOverLimit) {
  // Four bought and one more held unexpired: five, over the limit of four.
  for (const char* seat : {"A1", "A2", "A3", "A4"}) CorrectSale(1, seat, "fan-greedy");
  db_.Exec("UPDATE seats SET status = 'held', holder = 'fan-greedy', hold_expires_at = now() + "
           "interval '5 minutes' WHERE event_id = 1 AND seat = 'A5'");
  // An expired hold does not count: exactly four for this fan in event 2.
  for (const char* seat : {"A1", "A2", "A3", "A4"}) CorrectSale(2, seat, "fan-fine");
  db_.Exec("UPDATE seats SET status = 'held', holder = 'fan-fine', hold_expires_at = now() - "
           "interval '5 minutes' WHERE event_id = 2 AND seat = 'A5'");
  ExpectOnly(Judge(db_), "fan_over_limit", {{"1", 1}});
}

}  // namespace
}  // namespace seatwatch
