// reconciliation.scoped.sql against reconciliation.sql on a real database:
// for any set of events, the scoped query returns exactly the full query's
// rows of those events (next_expiry_unix included) on the same snapshot, so
// an incremental check can splice a recheck into its last full result. And
// the scoped query reads only the listed events, through indexes.
#include <gtest/gtest.h>

#include <pqxx/nontransaction>
#include <pqxx/result>
#include <pqxx/transaction>

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "config/load.h"
#include "db/array_literal.h"
#include "support/scratch_db.h"
#include "support/test_env.h"

namespace seatwatch {
namespace {

using testing::ScratchDatabase;
using Row = std::vector<std::optional<std::string>>;

constexpr int kFanLimit = 4;

std::string Query(const std::string& name) {
  return config::TrimSql(testing::ReadFile(testing::SourceDir() + "/queries/booking/" + name));
}

std::vector<Row> ToRows(const pqxx::result& result) {
  std::vector<Row> rows;
  for (const auto& r : result) {
    Row row;
    for (const auto& field : r) {
      row.push_back(field.is_null() ? std::nullopt : std::optional<std::string>(field.c_str()));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string Show(const std::vector<Row>& rows) {
  std::string out;
  for (const auto& row : rows) {
    for (const auto& v : row) out += (v ? *v : "NULL") + " | ";
    out += "\n";
  }
  return out;
}

// Random booking data: `events` events (ids 1..events) of 0..30 seats each,
// free, held (unexpired, expired, no expiry) and sold seats with their
// tickets and payments, fans drawn from a small pool per event (so some go
// over the limit on their own), failed and refunded payments, and each of
// the six violations injected into some events (fan_over_limit: one fan
// with 5 sold seats in every 20th event). Events with no seats but an
// orphan ticket have invariant rows and no inventory rows.
struct Workload {
  std::set<std::string> injected;  // invariants injected at least once
};

Workload LoadRandomBooking(const ScratchDatabase& db, int events, unsigned seed) {
  std::mt19937 rng(seed);
  auto chance = [&](double p) { return std::uniform_real_distribution<>(0, 1)(rng) < p; };
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<>(lo, hi)(rng); };
  std::vector<std::string> seats, tickets, payments;
  Workload workload;
  auto fan = [&](int e) {
    return "'f" + std::to_string(e) + "-" + std::to_string(pick(0, 5)) + "'";
  };
  for (int e = 1; e <= events; ++e) {
    std::string ev = std::to_string(e);
    int n = chance(0.1) ? 0 : pick(1, 30);
    for (int s = 1; s <= n; ++s) {
      std::string seat = "'S" + std::to_string(s) + "'";
      std::string key = "'p" + ev + "-" + std::to_string(s);
      double r = std::uniform_real_distribution<>(0, 1)(rng);
      if (r < 0.35) {  // free
        seats.push_back("(" + ev + "," + seat + ",'free',NULL,NULL)");
        if (chance(0.03)) {
          tickets.push_back("(" + ev + "," + seat + "," + fan(e) + ")");
          workload.injected.insert("ticket_without_sold_seat");
        }
      } else if (r < 0.6) {  // held
        std::string holder = fan(e);
        std::string expiry;
        double h = std::uniform_real_distribution<>(0, 1)(rng);
        if (h < 0.6) {
          expiry = "now() + make_interval(secs => " + std::to_string(pick(300, 86400)) + ".25)";
        } else if (h < 0.9) {
          expiry = "now() - make_interval(secs => " + std::to_string(pick(1, 86400)) + ")";
        } else {
          expiry = "NULL";
        }
        seats.push_back("(" + ev + "," + seat + ",'held'," + holder + "," + expiry + ")");
        if (chance(0.5))
          payments.push_back("(" + key + "'," + ev + "," + seat + "," + holder + ",'started')");
        if (chance(0.03)) {
          payments.push_back("(" + key + "-c'," + ev + "," + seat + "," + holder + ",'confirmed')");
          workload.injected.insert("confirmed_payment_without_ticket");
        }
      } else {  // sold
        std::string holder = fan(e);
        seats.push_back("(" + ev + "," + seat + ",'sold'," + holder + ",NULL)");
        if (chance(0.03)) {
          workload.injected.insert("sold_seat_without_ticket");
        } else {
          tickets.push_back("(" + ev + "," + seat + "," + (chance(0.02) ? fan(e) : holder) + ")");
        }
        if (chance(0.03)) {
          workload.injected.insert("ticket_without_confirmed_payment");
        } else {
          payments.push_back("(" + key + "'," + ev + "," + seat + "," + holder + ",'confirmed')");
        }
        if (chance(0.03)) {
          payments.push_back("(" + key + "-dup'," + ev + "," + seat + "," + holder +
                             ",'confirmed')");
          workload.injected.insert("double_confirmed_payment");
        }
      }
      if (chance(0.05)) {
        payments.push_back("(" + key + "-x'," + ev + "," + seat + "," + fan(e) + "," +
                           (chance(0.5) ? "'failed')" : "'refunded')"));
      }
    }
    if (n == 0 && chance(0.3)) {
      tickets.push_back("(" + ev + ",'S1'," + fan(e) + ")");
      workload.injected.insert("ticket_without_sold_seat");
    }
    if (e % 20 == 1) {  // one fan buys 5 seats, properly ticketed and paid
      for (int x = 1; x <= 5; ++x) {
        std::string seat = "'X" + std::to_string(x) + "'";
        std::string holder = "'f" + ev + "-over'";
        seats.push_back("(" + ev + "," + seat + ",'sold'," + holder + ",NULL)");
        tickets.push_back("(" + ev + "," + seat + "," + holder + ")");
        payments.push_back("('x" + ev + "-" + std::to_string(x) + "'," + ev + "," + seat + "," +
                           holder + ",'confirmed')");
      }
      workload.injected.insert("fan_over_limit");
    }
  }
  auto join = [](const std::vector<std::string>& values) {
    std::string out;
    for (const auto& v : values) out += (out.empty() ? "" : ",") + v;
    return out;
  };
  db.Exec("INSERT INTO seats (event_id, seat, status, holder, hold_expires_at) VALUES " +
          join(seats));
  if (!tickets.empty())
    db.Exec("INSERT INTO tickets (event_id, seat, fan) VALUES " + join(tickets));
  db.Exec(
      "INSERT INTO payments (idempotency_key, event_id, seat, fan, status, amount_cents) "
      "SELECT k, e, s, f, st, 1000 FROM (VALUES " +
      join(payments) + ") AS v(k, e, s, f, st)");
  db.Exec("ANALYZE");
  return workload;
}

class ScopedReconciliationTest : public ::testing::Test {
 protected:
  ScopedReconciliationTest() : db_("seatwatch_scoped_reconciliation") {}
  ScratchDatabase db_;
};

// Every random key set, in one REPEATABLE READ snapshot: the scoped rows are
// the full rows of those keys, row for row and in the same order; keys with
// no rows return none.
TEST_F(ScopedReconciliationTest, ScopedRowsEqualFullRowsOfTheKeysOnOneSnapshot) {
  const int kEvents = 120;
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  Workload workload = LoadRandomBooking(db_, kEvents, seed);

  auto connection = db_.Connect();
  pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> tx(*connection);
  std::vector<Row> full = ToRows(tx.exec_params(Query("reconciliation.sql"), kFanLimit));
  std::map<std::string, std::vector<Row>> by_event;
  std::set<std::string> violated;
  for (const auto& row : full) {
    by_event[*row[0]].push_back(row);
    if (row[1]) violated.insert(*row[1]);
  }
  // The comparison covers every invariant: each was injected and is
  // reported (fan_over_limit also arises from the small fan pools).
  for (const auto& invariant : workload.injected)
    EXPECT_EQ(violated.count(invariant), 1u) << invariant;
  EXPECT_EQ(violated.size(), 6u) << Show(full);

  // next_expiry_unix: on all seven inventory rows of an event, the earliest
  // unexpired hold in epoch seconds (NULL when none); NULL on invariant rows.
  std::map<std::string, std::string> expected_expiry;
  for (const auto& r : tx.exec("SELECT event_id, extract(epoch FROM min(hold_expires_at))::float8 "
                               "FROM seats WHERE status = 'held' AND hold_expires_at > now() "
                               "GROUP BY event_id")) {
    expected_expiry[r[0].c_str()] = r[1].c_str();
  }
  ASSERT_GT(expected_expiry.size(), 10u);
  for (const auto& row : full) {
    ASSERT_EQ(row.size(), 6u);
    if (row[1]) {
      EXPECT_FALSE(row[5]) << "invariant row with an expiry: " << Show({row});
    } else if (expected_expiry.count(*row[0])) {
      EXPECT_EQ(row[5], expected_expiry[*row[0]]) << Show({row});
    } else {
      EXPECT_FALSE(row[5]) << "event without unexpired holds: " << Show({row});
    }
  }

  const std::string scoped = Query("reconciliation.scoped.sql");
  std::mt19937 rng(seed);
  std::vector<int> universe;  // every event, some without rows, and ids that do not exist
  for (int e = 1; e <= kEvents + 5; ++e) universe.push_back(e);
  for (int size : {1, 1, 2, 3, 5, 10, 10, 25, 60, kEvents + 5}) {
    std::vector<int> keys = universe;
    std::shuffle(keys.begin(), keys.end(), rng);
    keys.resize(size);
    std::vector<std::string> text;
    std::vector<Row> expected;
    std::sort(keys.begin(), keys.end());
    for (int k : keys) {
      text.push_back(std::to_string(k));
      auto it = by_event.find(std::to_string(k));
      if (it != by_event.end())
        expected.insert(expected.end(), it->second.begin(), it->second.end());
    }
    // Unsorted, with a duplicate, in db/array_literal's quoted form.
    std::shuffle(text.begin(), text.end(), rng);
    text.push_back(text.front());
    std::vector<Row> got = ToRows(tx.exec_params(scoped, db::TextArrayLiteral(text), kFanLimit));
    EXPECT_EQ(got, expected) << size << " keys " << db::TextArrayLiteral(text) << "\nscoped:\n"
                             << Show(got) << "full:\n"
                             << Show(expected);
  }
  // Keys with no rows at all, and no keys.
  EXPECT_TRUE(tx.exec_params(scoped, "{1000001,1000002}", kFanLimit).empty());
  EXPECT_TRUE(tx.exec_params(scoped, "{}", kFanLimit).empty());
  tx.commit();
}

// A held seat whose hold lapses moves from seats_held to seats_held_expired
// and the event's next expiry moves to its next hold, with no write between
// the two reads: next_expiry_unix is the moment the rows change by time.
// (The first hold lasts 6 s: the first read must come before it lapses.)
TEST_F(ScopedReconciliationTest, NextExpiryIsTheMomentTheRowsChangeByTime) {
  db_.Exec(
      "INSERT INTO seats (event_id, seat, status, holder, hold_expires_at) VALUES "
      "(7, 'A', 'held', 'fan', now() + interval '6 seconds'), "
      "(7, 'B', 'held', 'fan', now() + interval '1 hour'), "
      "(7, 'C', 'held', 'fan', now() - interval '1 hour'), "
      "(8, 'A', 'sold', 'fan', NULL)");
  db_.Exec("INSERT INTO tickets VALUES (8, 'A', 'fan')");
  db_.Exec(
      "INSERT INTO payments (idempotency_key, event_id, seat, fan, status, amount_cents) "
      "VALUES ('k', 8, 'A', 'fan', 'confirmed', 1000)");
  auto expiry_of = [&](const char* seat) {
    return db_.Scalar(std::string("SELECT extract(epoch FROM hold_expires_at)::float8 FROM seats "
                                  "WHERE event_id = 7 AND seat = '") +
                      seat + "'");
  };
  // event/kind -> {count, next_expiry_unix or "NULL"}
  auto read = [&] {
    auto connection = db_.Connect();
    pqxx::nontransaction tx(*connection);
    std::map<std::string, std::pair<std::string, std::string>> out;
    for (const auto& r : tx.exec_params(Query("reconciliation.scoped.sql"), "{7,8}", kFanLimit)) {
      if (r["kind"].is_null()) continue;
      out[std::string(r["event_id"].c_str()) + "/" + r["kind"].c_str()] = {
          r["count"].c_str(),
          r["next_expiry_unix"].is_null() ? "NULL" : r["next_expiry_unix"].c_str()};
    }
    return out;
  };
  auto before = read();
  EXPECT_EQ(before["7/seats_held"].first, "2");
  EXPECT_EQ(before["7/seats_held_expired"].first, "1");
  for (const char* kind : {"seats_free", "seats_held", "seats_sold", "payments_started"}) {
    EXPECT_EQ(before[std::string("7/") + kind].second, expiry_of("A")) << kind;
    EXPECT_EQ(before[std::string("8/") + kind].second, "NULL") << "no held seat: no expiry";
  }
  // Wait past the first expiry, by the database's clock.
  db_.Exec("SELECT pg_sleep(greatest(0, " + expiry_of("A") +
           " - extract(epoch FROM clock_timestamp())) + 0.2)");
  auto after = read();
  EXPECT_EQ(after["7/seats_held"].first, "1");
  EXPECT_EQ(after["7/seats_held_expired"].first, "2");
  EXPECT_EQ(after["7/seats_held"].second, expiry_of("B"));
}

// Few keys at a time, as an incremental check asks: every table is read
// through an index on event_id, never scanned whole. ANALYZE over fewer
// than 30,000 rows per table reads them all, so the plan is not left to a
// sample.
TEST_F(ScopedReconciliationTest, FewKeysAreReadThroughIndexes) {
  db_.Exec(
      "INSERT INTO seats (event_id, seat, status, holder, hold_expires_at) "
      "SELECT e, 'S' || n, CASE WHEN n % 3 = 0 THEN 'sold' WHEN n % 7 = 0 THEN 'held' "
      "ELSE 'free' END, CASE WHEN n % 3 = 0 OR n % 7 = 0 THEN 'fan' || n END, "
      "CASE WHEN n % 7 = 0 THEN now() + interval '1 hour' END "
      "FROM generate_series(1, 300) e, generate_series(1, 90) n");
  db_.Exec("INSERT INTO tickets SELECT event_id, seat, holder FROM seats WHERE status = 'sold'");
  db_.Exec(
      "INSERT INTO payments (idempotency_key, event_id, seat, fan, status, amount_cents) "
      "SELECT event_id || '-' || seat, event_id, seat, holder, 'confirmed', 1000 "
      "FROM seats WHERE status = 'sold'");
  db_.Exec("ANALYZE");
  auto connection = db_.Connect();
  pqxx::nontransaction tx(*connection);
  // Parameter types inferred from the query, as for the daemon's own
  // (untyped) parameters; the first executions get custom plans, planned
  // for the values given.
  tx.exec("PREPARE scoped AS " + Query("reconciliation.scoped.sql"));
  for (const char* keys : {"{17}", "{3,150,299}", "{1,2,3,4,5,6,7,8,9,10}"}) {
    std::string plan;
    for (const auto& r : tx.exec(std::string("EXPLAIN EXECUTE scoped('") + keys + "', 4)")) {
      plan += std::string(r[0].c_str()) + "\n";
    }
    EXPECT_EQ(plan.find("Seq Scan"), std::string::npos) << keys << "\n" << plan;
    for (const char* index : {"seats_pkey", "seats_holder_idx", "tickets_event_id_seat_key",
                              "payments_event_seat_idx"}) {
      EXPECT_NE(plan.find(index), std::string::npos) << keys << ": " << index << "\n" << plan;
    }
  }
}

}  // namespace
}  // namespace seatwatch
