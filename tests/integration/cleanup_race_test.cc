// The race test: for 30 seconds, 8 buyers claim seats (free, or held with an
// expired hold), pay, confirm some with the ticket-inserting CAS and let
// others lapse, many confirms landing just before or just after expiry;
// 2 more go straight for the oldest expired holds, the rows the cleanup picks
// first. Meanwhile the daemon's cleanup frees expired holds every second in
// batches of 20. Afterwards:
//   * every shipped invariant (reconciliation.sql) reports zero, and
//     directly: no seat sold twice, every sold seat has exactly one ticket
//     for its holder, every ticket one confirmed payment for the same fan;
//   * every transition to free the cleanup made was of a hold already
//     expired by the database's clock in that transaction (a test-only
//     trigger audits each one), and nobody else freed a hold;
//   * no buyer's claim waited longer than the cleanup's lock_timeout (50ms)
//     because of the cleanup.
//
// What the last point asserts, and why it is not flaky on a 2-core machine.
// A claim can wait for the cleanup only on a row lock: both take ROW
// EXCLUSIVE on seats, which do not conflict with each other, and the cleanup
// never locks anything else a claim needs. The cleanup holds row locks only
// inside a batch transaction, from the start of its one UPDATE statement
// until its COMMIT. The test measures that window for every batch that freed
// a row, on the server's clock: from statement_timestamp() of the UPDATE
// (recorded by a BEFORE trigger) to the moment COMMIT runs the deferred
// constraint triggers (clock_timestamp()). A batch that freed nothing locked
// nothing (the rows it picks are exactly the rows it updates). So the longest
// window bounds every buyer's wait on the cleanup, including waits that no
// sampler of pg_locks would catch, and it does not depend on when the
// buyers' own threads get a CPU. The test asserts that the longest window is
// under lock_timeout, and also intersects each claim's own time span with the
// cleanup's windows on the same seat (same host clock) and asserts the same
// of the largest overlap. The claims' client-side latency is only reported:
// on 2 cores a client thread can be descheduled for tens of milliseconds for
// reasons that have nothing to do with locks. Measured here: windows of about
// 1ms (median) and 3-11ms at worst, against the 50ms bound. The test fails
// as it should when the cleanup statement is made to hold its locks for 60ms
// (pg_sleep inside it), or to free holds 300ms before they expire.
#include <gtest/gtest.h>

#include <pqxx/nontransaction>
#include <pqxx/result>
#include <pqxx/transaction>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <deque>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "config/load.h"
#include "support/daemon_process.h"
#include "support/daemon_test.h"
#include "support/scratch_db.h"
#include "support/test_env.h"

namespace seatwatch {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::system_clock;
using testing::Sample;
using testing::ScratchDatabase;
using testing::WaitFor;

constexpr auto kLoadTime = 30s;
constexpr int kBuyers = 8;
constexpr int kSnipers = 2;
constexpr int kEvents = 3;
constexpr int kSeatsPerEvent = 400;
constexpr double kLockTimeoutMs = 50;  // [cleanup] lock_timeout below
constexpr const char* kApp = "sw-race";
constexpr const char* kCleanupApp = "sw-race-cleanup";

double UnixNow() { return std::chrono::duration<double>(Clock::now().time_since_epoch()).count(); }

struct Claim {
  int event_id;
  std::string seat;
  double start_unix;
  double end_unix;
};

struct BuyerStats {
  long claims_won = 0;
  long claims_lost = 0;
  long sold = 0;
  long confirm_too_late = 0;
  long lapsed = 0;
  std::vector<Claim> claims;
  std::vector<std::string> sold_seats;
  std::vector<std::string> errors;
};

// Holds let lapse recently, so that other buyers go for them right when they
// expire: the moment the cleanup may be freeing them too.
class LapsedSeats {
 public:
  void Add(int event_id, const std::string& seat) {
    std::lock_guard<std::mutex> lock(mutex_);
    seats_.emplace_back(event_id, seat);
    if (seats_.size() > 64) seats_.pop_front();
  }
  bool Pick(std::mt19937& rng, int* event_id, std::string* seat) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (seats_.empty()) return false;
    const auto& picked = seats_[std::uniform_int_distribution<size_t>(0, seats_.size() - 1)(rng)];
    *event_id = picked.first;
    *seat = picked.second;
    return true;
  }

 private:
  std::mutex mutex_;
  std::deque<std::pair<int, std::string>> seats_;
};

// Claim (free, or held with a hold expired by the database's clock) and, if
// won, start the payment. Returns whether the claim won.
bool ClaimAndPay(pqxx::connection& connection, int event_id, const std::string& seat,
                 const std::string& fan, const std::string& key, int hold_ms, BuyerStats& stats) {
  Claim claim{event_id, seat, UnixNow(), 0};
  pqxx::result won;
  {
    pqxx::nontransaction tx(connection);
    won = tx.exec_params(
        "UPDATE seats SET status = 'held', holder = $3, "
        "       hold_expires_at = now() + $4 * interval '1 millisecond', version = version + 1 "
        " WHERE event_id = $1 AND seat = $2 "
        "   AND (status = 'free' OR (status = 'held' AND hold_expires_at <= now())) "
        "RETURNING version",
        event_id, seat, fan, hold_ms);
  }
  claim.end_unix = UnixNow();
  stats.claims.push_back(claim);
  if (won.empty()) {
    ++stats.claims_lost;
    return false;
  }
  ++stats.claims_won;
  pqxx::nontransaction tx(connection);
  tx.exec_params(
      "INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents) "
      "VALUES ($1, $2, $3, $4, 8000) ON CONFLICT (idempotency_key) DO NOTHING",
      key, event_id, seat, fan);
  return true;
}

// The confirm CAS: sell the seat and write the ticket in one statement, then
// mark the payment confirmed in the same transaction only if a ticket came
// back; otherwise the hold lapsed first and the payment is refunded.
void Confirm(pqxx::connection& connection, int event_id, const std::string& seat,
             const std::string& fan, const std::string& key, BuyerStats& stats,
             LapsedSeats& lapsed) {
  pqxx::work tx(connection);
  auto ticket = tx.exec_params(
      "WITH sold AS ("
      "  UPDATE seats SET status = 'sold', hold_expires_at = NULL, version = version + 1 "
      "   WHERE event_id = $1 AND seat = $2 "
      "     AND status = 'held' AND holder = $3 AND hold_expires_at > now() "
      "  RETURNING event_id, seat, holder) "
      "INSERT INTO tickets (event_id, seat, fan) SELECT event_id, seat, holder FROM sold "
      "RETURNING seat",
      event_id, seat, fan);
  if (ticket.size() == 1) {
    auto paid = tx.exec_params(
        "UPDATE payments SET status = 'confirmed' "
        "WHERE idempotency_key = $1 AND status = 'started'",
        key);
    if (paid.affected_rows() != 1) throw std::runtime_error("payment " + key + " not confirmed");
    tx.commit();
    ++stats.sold;
    stats.sold_seats.push_back(std::to_string(event_id) + "/" + seat);
  } else {
    tx.abort();
    pqxx::nontransaction refund(connection);
    refund.exec_params("UPDATE payments SET status = 'refunded' WHERE idempotency_key = $1", key);
    ++stats.confirm_too_late;
    lapsed.Add(event_id, seat);
  }
}

void Buyer(int id, const std::string& dsn, const std::atomic<bool>& stop, LapsedSeats& lapsed,
           BuyerStats& stats) {
  std::mt19937 rng(static_cast<unsigned>(id * 7919 + 17));
  std::uniform_real_distribution<double> unit(0, 1);
  try {
    pqxx::connection connection(dsn +
                                " application_name=race-buyer options='-c statement_timeout=10s'");
    for (long n = 0; !stop.load(); ++n) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2 + rng() % 9));  // think time
      int event_id = 1 + static_cast<int>(rng() % kEvents);
      std::string seat = "S" + std::to_string(1 + rng() % kSeatsPerEvent);
      if (unit(rng) < 0.35) lapsed.Pick(rng, &event_id, &seat);
      std::string fan = "fan-" + std::to_string(id) + "-" + std::to_string(n);
      std::string key = "chk-" + std::to_string(id) + "-" + std::to_string(n);
      int hold_ms = 1000 + static_cast<int>(rng() % 1001);

      if (!ClaimAndPay(connection, event_id, seat, fan, key, hold_ms, stats)) continue;
      double choice = unit(rng);
      if (choice >= 0.45) {  // lapse: the fan walks away
        ++stats.lapsed;
        lapsed.Add(event_id, seat);
        continue;
      }
      if (choice >= 0.25) {
        // Pay slowly: confirm around the moment the hold expires, some just
        // before it, some just after.
        std::this_thread::sleep_for(std::chrono::milliseconds(hold_ms - 250 + rng() % 501));
      }
      Confirm(connection, event_id, seat, fan, key, stats, lapsed);
    }
  } catch (const std::exception& e) {
    stats.errors.push_back(e.what());
  }
}

// Goes straight for holds that expired a while ago and have not been freed
// yet, oldest first: the very rows the cleanup picks first. (Only those
// expired for half a second or more, so that the cleanup still finds most of
// the backlog itself.)
void Sniper(int id, const std::string& dsn, const std::atomic<bool>& stop, LapsedSeats& lapsed,
            BuyerStats& stats) {
  std::mt19937 rng(static_cast<unsigned>(id * 104729 + 3));
  std::uniform_real_distribution<double> unit(0, 1);
  try {
    pqxx::connection connection(dsn +
                                " application_name=race-sniper options='-c statement_timeout=10s'");
    for (long n = 0; !stop.load(); ++n) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10 + rng() % 21));
      pqxx::result expired;
      {
        pqxx::nontransaction tx(connection);
        expired = tx.exec(
            "SELECT event_id, seat FROM seats WHERE status = 'held' "
            "AND hold_expires_at <= now() - interval '500 milliseconds' "
            "ORDER BY hold_expires_at LIMIT 3");
      }
      if (expired.empty() || unit(rng) < 0.5) continue;
      const auto row = expired[std::uniform_int_distribution<size_t>(0, expired.size() - 1)(rng)];
      int event_id = row[0].as<int>();
      std::string seat = row[1].c_str();
      std::string fan = "fan-s" + std::to_string(id) + "-" + std::to_string(n);
      std::string key = "chk-s" + std::to_string(id) + "-" + std::to_string(n);
      int hold_ms = 1000 + static_cast<int>(rng() % 1001);
      if (!ClaimAndPay(connection, event_id, seat, fan, key, hold_ms, stats)) continue;
      if (unit(rng) < 0.6) {
        ++stats.lapsed;
        lapsed.Add(event_id, seat);
        continue;
      }
      Confirm(connection, event_id, seat, fan, key, stats, lapsed);
    }
  } catch (const std::exception& e) {
    stats.errors.push_back(e.what());
  }
}

// Test-only audit: every hold that ends in free (and, for the report, every
// expired hold a buyer claimed again), with the database's clocks, and the
// moment each freeing transaction commits.
constexpr const char* kAuditSql = R"(
CREATE TABLE test_hold_audit (
    event_id integer, seat text, old_expires timestamptz, new_status text,
    tx_now timestamptz, stmt_at timestamptz, at timestamptz, app text, xid bigint);
CREATE FUNCTION test_audit_hold() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO test_hold_audit VALUES (OLD.event_id, OLD.seat, OLD.hold_expires_at, NEW.status,
      now(), statement_timestamp(), clock_timestamp(), current_setting('application_name'),
      txid_current());
  RETURN NEW;
END $$;
CREATE TRIGGER test_audit_hold BEFORE UPDATE ON seats FOR EACH ROW
  WHEN (OLD.status = 'held' AND NEW.status IN ('free', 'held')) EXECUTE FUNCTION test_audit_hold();
CREATE TABLE test_commit_audit (xid bigint, at timestamptz);
CREATE FUNCTION test_audit_commit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO test_commit_audit VALUES (txid_current(), clock_timestamp());
  RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER test_audit_commit AFTER UPDATE ON seats
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (OLD.status = 'held' AND NEW.status = 'free') EXECUTE FUNCTION test_audit_commit();
)";

std::string WriteConfig(const ScratchDatabase& db, int port) {
  std::string dir = testing::MakeTempDir("seatwatch-race");
  std::string queries = testing::SourceDir() + "/queries/booking/";
  std::string path = dir + "/seatwatch.toml";
  std::string toml;
  toml += "[database]\n";
  toml += "dsn = \"" + db.dsn() + "\"\n";
  toml += std::string("application_name = \"") + kApp + "\"\n";
  toml += "[http]\n";
  toml += "listen = \"127.0.0.1:" + std::to_string(port) + "\"\n";
  toml += "[poll]\ninterval = \"1s\"\n";
  toml += "[locks]\nenabled = false\n";
  toml += "[holds]\nsql = \"" + queries + "holds.sql\"\n";
  toml += "[cleanup]\n";
  toml += "enabled = true\n";
  toml += "sql = \"" + queries + "cleanup_expired_holds.sql\"\n";
  toml += "interval = \"1s\"\n";
  toml += "batch_size = 20\n";
  toml += "max_batches = 100\n";
  toml += "batch_pause = \"50ms\"\n";
  toml += "lock_timeout = \"50ms\"\n";  // kLockTimeoutMs
  toml += "statement_timeout = \"2s\"\n";
  testing::WriteFile(path, toml);
  return path;
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1,
                         static_cast<size_t>(p * static_cast<double>(values.size())))];
}

TEST(CleanupRaceTest, ConcurrentBuyersAndCleanupNeverSellASeatTwice) {
  ScratchDatabase db("sw_cleanup_race");
  db.Exec("INSERT INTO seats (event_id, seat) SELECT e, 'S' || n FROM generate_series(1, " +
          std::to_string(kEvents) + ") e, generate_series(1, " + std::to_string(kSeatsPerEvent) +
          ") n");
  db.Exec(kAuditSql);
  int port = testing::FreePort();
  testing::DaemonProcess daemon({"--config", WriteConfig(db, port)});
  auto metrics = [&] { return testing::ScrapeMetrics(port); };
  ASSERT_TRUE(WaitFor([&] { return Sample(metrics(), "seatwatch_cleanup_leader") == 1; }, 20s))
      << daemon.Log();

  std::atomic<bool> stop{false};
  LapsedSeats lapsed;
  std::vector<BuyerStats> stats(kBuyers + kSnipers);
  std::vector<std::thread> buyers;
  for (int i = 0; i < kBuyers; ++i) {
    buyers.emplace_back(Buyer, i, db.dsn(), std::cref(stop), std::ref(lapsed), std::ref(stats[i]));
  }
  for (int i = 0; i < kSnipers; ++i) {
    buyers.emplace_back(Sniper, i, db.dsn(), std::cref(stop), std::ref(lapsed),
                        std::ref(stats[kBuyers + i]));
  }
  std::this_thread::sleep_for(kLoadTime);
  stop = true;
  for (auto& buyer : buyers) buyer.join();

  // Every hold left expires within 2.25s; the cleanup then frees it.
  ASSERT_TRUE(WaitFor(
      [&] { return db.Scalar("SELECT count(*) FROM seats WHERE status = 'held'") == "0"; }, 20s))
      << daemon.Log();
  ASSERT_TRUE(WaitFor(
      [&] {
        std::string text = metrics();
        return Sample(text, "seatwatch_holds_expired") == 0 &&
               Sample(text, "seatwatch_holds_active") == 0;
      },
      10s));

  BuyerStats total;
  std::set<std::string> sold_by_clients;
  bool client_sold_twice = false;
  for (const auto& s : stats) {
    total.claims_won += s.claims_won;
    total.claims_lost += s.claims_lost;
    total.sold += s.sold;
    total.confirm_too_late += s.confirm_too_late;
    total.lapsed += s.lapsed;
    total.claims.insert(total.claims.end(), s.claims.begin(), s.claims.end());
    total.errors.insert(total.errors.end(), s.errors.begin(), s.errors.end());
    for (const auto& seat : s.sold_seats) client_sold_twice |= !sold_by_clients.insert(seat).second;
  }
  for (const auto& error : total.errors) ADD_FAILURE() << "buyer error: " << error;
  EXPECT_FALSE(client_sold_twice) << "two buyers were told they bought the same seat";

  // Every shipped invariant reports zero.
  auto connection = db.Connect();
  pqxx::nontransaction tx(*connection);
  std::string reconciliation = config::TrimSql(
      testing::ReadFile(testing::SourceDir() + "/queries/booking/reconciliation.sql"));
  for (const auto& row : tx.exec_params(reconciliation, 4)) {
    if (!row["invariant"].is_null()) {
      ADD_FAILURE() << "invariant " << row["invariant"].c_str() << " violated in event "
                    << row["event_id"].c_str() << ": " << row["violations"].c_str();
    }
  }
  // And directly.
  auto count = [&](const std::string& sql) { return tx.exec1(sql)[0].as<long>(); };
  EXPECT_EQ(count("SELECT count(*) FROM (SELECT 1 FROM tickets GROUP BY event_id, seat "
                  "HAVING count(*) > 1) x"),
            0)
      << "a seat ticketed twice";
  EXPECT_EQ(count("SELECT count(*) FROM seats s WHERE status = 'sold' AND (SELECT count(*) "
                  "FROM tickets t WHERE t.event_id = s.event_id AND t.seat = s.seat "
                  "AND t.fan = s.holder) <> 1"),
            0)
      << "a sold seat without exactly one ticket for its holder";
  EXPECT_EQ(count("SELECT count(*) FROM tickets t WHERE NOT EXISTS (SELECT 1 FROM seats s "
                  "WHERE s.event_id = t.event_id AND s.seat = t.seat AND s.status = 'sold' "
                  "AND s.holder = t.fan)"),
            0)
      << "a ticket whose seat is not sold to its fan";
  EXPECT_EQ(count("SELECT count(*) FROM tickets t WHERE (SELECT count(*) FROM payments p "
                  "WHERE p.event_id = t.event_id AND p.seat = t.seat AND p.fan = t.fan "
                  "AND p.status = 'confirmed') <> 1"),
            0)
      << "a ticket without one confirmed payment";
  EXPECT_EQ(count("SELECT count(*) FROM payments WHERE status = 'confirmed'"),
            count("SELECT count(*) FROM tickets"));
  EXPECT_EQ(count("SELECT count(*) FROM tickets"), total.sold);

  // Every hold the cleanup freed had expired by the database's clock in the
  // freeing transaction; nobody else freed a hold.
  const std::string freed = "SELECT count(*) FROM test_hold_audit WHERE new_status = 'free' ";
  const std::string by_cleanup = std::string("AND app = '") + kCleanupApp + "' ";
  const std::string by_others = std::string("AND app <> '") + kCleanupApp + "' ";
  long freed_by_cleanup = count(freed + by_cleanup);
  EXPECT_EQ(count(freed + by_others), 0) << "a hold freed by someone else than the cleanup";
  EXPECT_EQ(count(freed + by_cleanup + "AND (old_expires IS NULL OR old_expires > tx_now)"), 0)
      << "the cleanup freed a hold that had not expired";
  long reclaimed_by_buyers =
      count("SELECT count(*) FROM test_hold_audit WHERE new_status = 'held'");
  std::string text = metrics();
  EXPECT_EQ(Sample(text, "seatwatch_cleanup_freed_total"), freed_by_cleanup);
  EXPECT_EQ(Sample(text, "seatwatch_cleanup_batches_total{result=\"error\"}"), 0) << daemon.Log();
  EXPECT_GT(Sample(text, "seatwatch_cleanup_batches_total{result=\"ok\"}"), 20);

  // The cleanup's lock window of each freeing transaction, on the server's
  // clock: from the start of its UPDATE (one per transaction, so one
  // statement_timestamp()) to its COMMIT; and the seats it held meanwhile.
  std::map<long, std::pair<double, double>> windows_by_xid;
  std::map<std::string, std::vector<std::pair<double, double>>> windows_by_seat;
  for (const auto& row :
       tx.exec("SELECT a.xid, extract(epoch FROM a.stmt_at), "
               "       (SELECT extract(epoch FROM max(c.at)) FROM test_commit_audit c "
               "         WHERE c.xid = a.xid), "
               "       a.event_id || '/' || a.seat "
               "  FROM test_hold_audit a WHERE new_status = 'free' " +
               by_cleanup)) {
    ASSERT_FALSE(row[2].is_null()) << "a freeing transaction without its commit record";
    std::pair<double, double> window{row[1].as<double>(), row[2].as<double>()};
    windows_by_xid[row[0].as<long>()] = window;
    windows_by_seat[row[3].c_str()].push_back(window);
  }
  std::vector<double> windows;
  for (const auto& [xid, window] : windows_by_xid) {
    windows.push_back(1000 * (window.second - window.first));
  }
  // Each claim's overlap with a cleanup lock window on the same seat: the
  // longest it can have waited because of the cleanup.
  std::vector<double> latencies;
  double max_overlap_ms = 0;
  long claims_overlapping = 0;
  for (const auto& claim : total.claims) {
    latencies.push_back(1000 * (claim.end_unix - claim.start_unix));
    auto it = windows_by_seat.find(std::to_string(claim.event_id) + "/" + claim.seat);
    if (it == windows_by_seat.end()) continue;
    for (const auto& [from, to] : it->second) {
      double overlap = std::min(to, claim.end_unix) - std::max(from, claim.start_unix);
      if (overlap <= 0) continue;
      ++claims_overlapping;
      max_overlap_ms = std::max(max_overlap_ms, 1000 * overlap);
    }
  }
  double max_window_ms = windows.empty() ? 0 : *std::max_element(windows.begin(), windows.end());
  long slow_claims = std::count_if(latencies.begin(), latencies.end(),
                                   [](double ms) { return ms > kLockTimeoutMs; });

  std::cout << "claims: " << total.claims.size() << " (won " << total.claims_won << ", lost "
            << total.claims_lost << "); sold " << total.sold << ", confirmed too late "
            << total.confirm_too_late << ", walked away " << total.lapsed << "\n"
            << "holds freed by the cleanup: " << freed_by_cleanup << " in " << windows.size()
            << " transactions; expired holds claimed again by buyers: " << reclaimed_by_buyers
            << "\n"
            << "batches ok/lock_timeout/error: "
            << Sample(text, "seatwatch_cleanup_batches_total{result=\"ok\"}") << "/"
            << Sample(text, "seatwatch_cleanup_batches_total{result=\"lock_timeout\"}") << "/"
            << Sample(text, "seatwatch_cleanup_batches_total{result=\"error\"}") << "\n"
            << "cleanup lock window ms: max " << max_window_ms << ", p99 "
            << Percentile(windows, 0.99) << ", median " << Percentile(windows, 0.5) << "\n"
            << "claims overlapping a cleanup lock window on their seat: " << claims_overlapping
            << ", longest overlap " << max_overlap_ms << " ms\n"
            << "claim latency ms (client side, any cause): max " << Percentile(latencies, 1.0)
            << ", p99 " << Percentile(latencies, 0.99) << ", over " << kLockTimeoutMs
            << "ms: " << slow_claims << "\n";

  // Enough happened for the verdicts above to mean something.
  EXPECT_GT(total.sold, 50);
  EXPECT_GT(total.confirm_too_late, 10);
  EXPECT_GT(freed_by_cleanup, 100);
  // No buyer waited on the cleanup for as long as its lock_timeout.
  EXPECT_LT(max_window_ms, kLockTimeoutMs);
  EXPECT_LT(max_overlap_ms, kLockTimeoutMs);
  EXPECT_EQ(daemon.Stop(), 0);
}

}  // namespace
}  // namespace seatwatch
