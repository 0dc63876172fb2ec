// One cleanup run (HoldCleanup) and the worker around it, in-process, against
// a real database: it frees exactly the expired holds, skips a row another
// session has locked and frees it on a later run, counts a lock timeout or
// an error as such and ends the run, rolls back a statement of the wrong
// shape, and backs off instead of retrying in a tight loop.
#include <gtest/gtest.h>

#include <pqxx/nontransaction>
#include <pqxx/result>
#include <pqxx/transaction>

#include <cmath>
#include <map>
#include <set>
#include <thread>

#include "cleanup/cleanup_leader.h"
#include "cleanup/cleanup_worker.h"
#include "cleanup/hold_cleanup.h"
#include "config/load.h"
#include "db/conninfo.h"
#include "support/daemon_process.h"
#include "support/scratch_db.h"
#include "support/test_env.h"

namespace seatwatch::cleanup {
namespace {

using namespace std::chrono_literals;

// What a session's end does to the leader lock, done by hand while the
// session lives on.
void ReleaseLeaderLock(pqxx::connection& connection) {
  pqxx::nontransaction tx(connection);
  tx.exec_params("SELECT pg_advisory_unlock($1::bigint)", std::to_string(CleanupLeader::kLockKey));
}
using testing::ScratchDatabase;

std::string ShippedSql(const std::string& file) {
  return config::TrimSql(testing::ReadFile(testing::SourceDir() + "/queries/booking/" + file));
}

config::Config CleanupConfig(const ScratchDatabase& db, int batch_size) {
  config::Config config;
  config.database.dsn = db.dsn();
  config.database.application_name = "sw-run-test";
  config.cleanup.enabled = true;
  config.cleanup.sql = ShippedSql("cleanup_expired_holds.sql");
  config.cleanup.dry_run_sql = ShippedSql("cleanup_expired_holds.dry_run.sql");
  config.cleanup.batch_size = batch_size;
  config.cleanup.batch_pause = 0ms;
  config.cleanup.lock_timeout = 50ms;
  config.cleanup.statement_timeout = 2s;
  return config;
}

// A connection as the worker opens it: writes allowed, "-cleanup" name.
std::unique_ptr<pqxx::connection> CleanupConnection(const config::Config& config) {
  return std::make_unique<pqxx::connection>(
      db::BuildConninfo(config.database.dsn, CleanupSessionSettings(config)));
}

// What a cleanup run needs, as the worker sets it up: the config (batches of
// `batch_size`), its metrics, a stop signal and the cleanup's session.
struct CleanupParts {
  CleanupParts(const ScratchDatabase& db, int batch_size)
      : config(CleanupConfig(db, batch_size)),
        metrics(config.cleanup),
        connection(CleanupConnection(config)) {}
  config::Config config;
  CleanupMetrics metrics;
  StopSignal stop;
  std::unique_ptr<pqxx::connection> connection;
};

// Every seat row as one line, for before/after comparisons.
std::map<std::string, std::string> SeatRows(const ScratchDatabase& db) {
  auto connection = db.Connect();
  pqxx::nontransaction tx(*connection);
  std::map<std::string, std::string> rows;
  for (const auto& row :
       tx.exec("SELECT event_id || '/' || seat, concat_ws('|', status, coalesce(holder, '-'), "
               "coalesce(hold_expires_at::text, '-'), version) FROM seats")) {
    rows[row[0].c_str()] = row[1].c_str();
  }
  return rows;
}

// Expired holds 1/S1..1/S5 and 2/S1, 2/S2 (2/S1 the oldest); active holds
// 1/S6..1/S8 and 2/S3; sold seats 1/S9, 1/S10 with expiries in the past; the
// rest free.
void Seed(const ScratchDatabase& db) {
  db.Exec(R"(
INSERT INTO seats (event_id, seat) SELECT e, 'S' || n FROM generate_series(1, 2) e, generate_series(1, 12) n;
UPDATE seats SET status = 'held', holder = 'fan-' || event_id || seat,
                 hold_expires_at = now() - interval '1 minute' * substr(seat, 2)::int
 WHERE event_id = 1 AND seat IN ('S1', 'S2', 'S3', 'S4', 'S5');
UPDATE seats SET status = 'held', holder = 'fan-' || event_id || seat,
                 hold_expires_at = now() - interval '2 hours' WHERE event_id = 2 AND seat = 'S1';
UPDATE seats SET status = 'held', holder = 'fan-' || event_id || seat,
                 hold_expires_at = now() - interval '1 second' WHERE event_id = 2 AND seat = 'S2';
UPDATE seats SET status = 'held', holder = 'fan-' || event_id || seat,
                 hold_expires_at = now() + interval '10 minutes'
 WHERE (event_id = 1 AND seat IN ('S6', 'S7', 'S8')) OR (event_id = 2 AND seat = 'S3');
UPDATE seats SET status = 'sold', holder = 'buyer-' || seat, hold_expires_at = now() - interval '1 hour'
 WHERE event_id = 1 AND seat IN ('S9', 'S10');
INSERT INTO tickets (event_id, seat, fan) SELECT event_id, seat, holder FROM seats WHERE status = 'sold';
)");
}

TEST(CleanupRunTest, FreesExactlyTheExpiredHoldsAndSkipsALockedRow) {
  ScratchDatabase db("sw_cleanup_exact");
  Seed(db);
  auto before = SeatRows(db);
  CleanupParts parts(db, 2);
  auto& [config, metrics, stop, connection] = parts;

  // A buyer is claiming the oldest expired hold right now: its row is locked
  // in an open transaction.
  auto buyer = db.Connect();
  pqxx::work buyer_tx(*buyer);
  buyer_tx.exec("SELECT * FROM seats WHERE event_id = 2 AND seat = 'S1' FOR UPDATE");

  HoldCleanup cleanup(config.cleanup, metrics, stop);
  RunResult first = cleanup.Run(*connection);
  ASSERT_EQ(first.outcome, BatchResult::kOk) << first.error;
  EXPECT_LT(first.seconds, 1.0);  // it never waited for the buyer
  // 6 expired and unlocked, 2 per batch: 2, 2, 2, then an empty batch ends it.
  EXPECT_EQ(first.summary.freed(), 6u);
  EXPECT_EQ(first.summary.batches(), 4);
  EXPECT_EQ(first.summary.per_event().at("1"), 5u);
  EXPECT_EQ(first.summary.per_event().at("2"), 1u);

  auto after = SeatRows(db);
  std::set<std::string> expected_freed = {"1/S1", "1/S2", "1/S3", "1/S4", "1/S5", "2/S2"};
  for (const auto& [key, row] : before) {
    if (expected_freed.count(key)) {
      // Free, holder and expiry cleared, version + 1.
      EXPECT_EQ(after[key], "free|-|-|1") << key;
    } else {
      EXPECT_EQ(after[key], row) << key << " must not change";
    }
  }
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM tickets"), "2");

  // The buyer lets go without changing the row: the next run frees it.
  buyer_tx.abort();
  RunResult second = cleanup.Run(*connection);
  ASSERT_EQ(second.outcome, BatchResult::kOk) << second.error;
  EXPECT_EQ(second.summary.freed(), 1u);
  EXPECT_EQ(second.summary.batches(), 1);
  EXPECT_EQ(SeatRows(db)["2/S1"], "free|-|-|1");
  EXPECT_EQ(
      db.Scalar("SELECT count(*) FROM seats WHERE status = 'held' AND hold_expires_at <= now()"),
      "0");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM seats WHERE status = 'held'"), "4");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM seats WHERE status = 'sold'"), "2");

  EXPECT_EQ(metrics.freed(), 7u);
  EXPECT_EQ(metrics.batches(BatchResult::kOk), 5u);
  EXPECT_EQ(metrics.batches(BatchResult::kLockTimeout), 0u);
  EXPECT_EQ(metrics.batches(BatchResult::kError), 0u);
}

TEST(CleanupRunTest, AHoldReclaimedByABuyerIsNotFreed) {
  ScratchDatabase db("sw_cleanup_reclaim");
  Seed(db);
  CleanupParts parts(db, 100);
  auto& [config, metrics, stop, connection] = parts;
  // A buyer claims the expired hold 1/S1 (expire-on-read) and has not
  // committed yet: the cleanup skips the row; once the buyer commits, the
  // row is an unexpired hold and stays the buyer's.
  auto buyer = db.Connect();
  pqxx::work buyer_tx(*buyer);
  auto claimed = buyer_tx.exec(
      "UPDATE seats SET status = 'held', holder = 'fan-new', "
      "hold_expires_at = now() + interval '10 minutes', version = version + 1 "
      "WHERE event_id = 1 AND seat = 'S1' "
      "AND (status = 'free' OR (status = 'held' AND hold_expires_at <= now())) RETURNING seat");
  ASSERT_EQ(claimed.size(), 1u);
  HoldCleanup cleanup(config.cleanup, metrics, stop);
  RunResult run = cleanup.Run(*connection);
  ASSERT_EQ(run.outcome, BatchResult::kOk) << run.error;
  EXPECT_EQ(run.summary.freed(), 6u);
  buyer_tx.commit();
  RunResult again = cleanup.Run(*connection);
  EXPECT_EQ(again.summary.freed(), 0u);
  EXPECT_EQ(SeatRows(db)["1/S1"].substr(0, 13), "held|fan-new|");
}

TEST(CleanupRunTest, DryRunChangesNothingAndCountsOneBatch) {
  ScratchDatabase db("sw_cleanup_dry");
  Seed(db);
  auto before = SeatRows(db);
  config::Config config = CleanupConfig(db, 5);
  config.cleanup.dry_run = true;
  CleanupMetrics metrics(config.cleanup);
  StopSignal stop;
  auto connection = CleanupConnection(config);
  HoldCleanup cleanup(config.cleanup, metrics, stop);
  RunResult run = cleanup.Run(*connection);
  ASSERT_EQ(run.outcome, BatchResult::kOk) << run.error;
  EXPECT_EQ(run.summary.batches(), 1);  // it cannot make progress: one batch per run
  EXPECT_EQ(run.summary.freed(), 5u);   // would have freed: the batch size
  EXPECT_EQ(metrics.freed(), 5u);
  EXPECT_EQ(SeatRows(db), before);
}

TEST(CleanupRunTest, ALockTimeoutEndsTheRunAndIsCountedAsSuch) {
  ScratchDatabase db("sw_cleanup_lock_timeout");
  Seed(db);
  CleanupParts parts(db, 2);
  auto& [config, metrics, stop, connection] = parts;
  // SHARE conflicts with the ROW EXCLUSIVE lock every UPDATE of seats needs.
  auto locker = db.Connect();
  pqxx::work locker_tx(*locker);
  locker_tx.exec("LOCK TABLE seats IN SHARE MODE");
  HoldCleanup cleanup(config.cleanup, metrics, stop);
  RunResult run = cleanup.Run(*connection);
  EXPECT_EQ(run.outcome, BatchResult::kLockTimeout);
  EXPECT_NE(run.error.find("lock timeout"), std::string::npos) << run.error;
  EXPECT_EQ(run.summary.batches(), 0);
  EXPECT_LT(run.seconds, 1.0);
  EXPECT_EQ(metrics.batches(BatchResult::kLockTimeout), 1u);
  EXPECT_EQ(metrics.batches(BatchResult::kOk), 0u);
  locker_tx.abort();
  EXPECT_EQ(
      db.Scalar("SELECT count(*) FROM seats WHERE status = 'held' AND hold_expires_at <= now()"),
      "7");
  // The session is still usable: the next run does the work.
  RunResult next = cleanup.Run(*connection);
  EXPECT_EQ(next.outcome, BatchResult::kOk) << next.error;
  EXPECT_EQ(next.summary.freed(), 7u);
}

TEST(CleanupRunTest, SerializationFailuresAndOtherErrorsCountAsError) {
  ScratchDatabase db("sw_cleanup_errors");
  Seed(db);
  db.Exec(R"(
CREATE FUNCTION fail_with(state text, n int) RETURNS TABLE (event_id int, seat text)
LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected' USING ERRCODE = state; END $$;
)");
  for (const std::string state : {"40001", "40P01", "22012"}) {
    config::Config config = CleanupConfig(db, 2);
    config.cleanup.sql = "SELECT * FROM fail_with('" + state + "', $1)";
    CleanupMetrics metrics(config.cleanup);
    StopSignal stop;
    auto connection = CleanupConnection(config);
    HoldCleanup cleanup(config.cleanup, metrics, stop);
    RunResult run = cleanup.Run(*connection);
    EXPECT_EQ(run.outcome, BatchResult::kError) << state;
    EXPECT_NE(run.error.find("injected"), std::string::npos) << run.error;
    EXPECT_EQ(metrics.batches(BatchResult::kError), 1u) << state;
    EXPECT_EQ(metrics.batches(BatchResult::kLockTimeout), 0u) << state;
  }
}

TEST(CleanupRunTest, AStatementOfTheWrongShapeIsRolledBack) {
  ScratchDatabase db("sw_cleanup_shape");
  Seed(db);
  auto before = SeatRows(db);
  config::Config config = CleanupConfig(db, 100);
  config.cleanup.sql =
      "UPDATE seats SET status = 'free', holder = NULL, hold_expires_at = NULL "
      "WHERE status = 'held' AND hold_expires_at <= now() AND $1::int > 0 RETURNING seat";
  CleanupMetrics metrics(config.cleanup);
  StopSignal stop;
  auto connection = CleanupConnection(config);
  HoldCleanup cleanup(config.cleanup, metrics, stop);
  RunResult run = cleanup.Run(*connection);
  EXPECT_EQ(run.outcome, BatchResult::kError);
  EXPECT_NE(run.error.find("must return the columns event_id and seat"), std::string::npos)
      << run.error;
  EXPECT_EQ(metrics.freed(), 0u);
  EXPECT_EQ(SeatRows(db), before);
}

// A login role for one test, dropped after the test's database is gone.
struct TestRole {
  explicit TestRole(std::string role) : name(std::move(role)) {
    Admin("DROP ROLE IF EXISTS " + name);
  }
  ~TestRole() {
    try {
      Admin("DROP ROLE IF EXISTS " + name);
    } catch (...) {
    }
  }
  static void Admin(const std::string& sql) {
    pqxx::connection admin(testing::ScratchDsn("postgres"));
    pqxx::nontransaction tx(admin);
    tx.exec(sql);
  }
  std::string name;
};

TEST(CleanupRunTest, RunsWithTheDocumentedLeastPrivileges) {
  TestRole role("sw_cleanup_least");
  ScratchDatabase db("sw_cleanup_grants");
  Seed(db);
  // The GRANTs docs/cleanup.md gives: read the three tables (the monitor),
  // update only the four columns the cleanup writes.
  db.Exec("CREATE ROLE " + role.name +
          " LOGIN;"
          "GRANT SELECT ON seats, tickets, payments TO " +
          role.name + ";");
  config::Config config = CleanupConfig(db, 100);
  std::string dsn = db.dsn();
  config.database.dsn = dsn.replace(dsn.find("user=postgres"), 13, "user=" + role.name);
  CleanupMetrics metrics(config.cleanup);
  StopSignal stop;
  {
    // Without the UPDATE grant: the batch fails and is counted as an error.
    auto connection = CleanupConnection(config);
    HoldCleanup cleanup(config.cleanup, metrics, stop);
    RunResult run = cleanup.Run(*connection);
    EXPECT_EQ(run.outcome, BatchResult::kError);
    EXPECT_NE(run.error.find("permission denied"), std::string::npos) << run.error;
  }
  db.Exec("GRANT UPDATE (status, holder, hold_expires_at, version) ON seats TO " + role.name);
  auto connection = CleanupConnection(config);
  CleanupLeader leader;
  EXPECT_TRUE(leader.Ensure(*connection));  // advisory locks and pg_locks need no grant
  HoldCleanup cleanup(config.cleanup, metrics, stop);
  RunResult run = cleanup.Run(*connection);
  EXPECT_EQ(run.outcome, BatchResult::kOk) << run.error;
  EXPECT_EQ(run.summary.freed(), 7u);
  config.cleanup.dry_run = true;
  HoldCleanup dry(config.cleanup, metrics, stop);
  EXPECT_EQ(dry.Run(*connection).outcome, BatchResult::kOk);
  ReleaseLeaderLock(*connection);
}

TEST(CleanupRunTest, TheCleanupSessionIsNamedAndMayWrite) {
  ScratchDatabase db("sw_cleanup_session");
  config::Config config = CleanupConfig(db, 2);
  auto connection = CleanupConnection(config);
  pqxx::nontransaction tx(*connection);
  EXPECT_EQ(tx.exec1("SELECT current_setting('application_name')")[0].as<std::string>(),
            "sw-run-test-cleanup");
  EXPECT_EQ(tx.exec1("SHOW default_transaction_read_only")[0].as<std::string>(), "off");
  EXPECT_EQ(tx.exec1("SHOW lock_timeout")[0].as<std::string>(), "50ms");
}

TEST(CleanupLeaderLockTest, OneSessionHoldsItChecksWithoutStackingAndReleasesIt) {
  ScratchDatabase db("sw_cleanup_lock");
  config::Config config = CleanupConfig(db, 2);
  auto first = CleanupConnection(config);
  auto second = CleanupConnection(config);
  CleanupLeader leader;
  CleanupLeader other;
  EXPECT_TRUE(leader.Ensure(*first));
  EXPECT_FALSE(other.Ensure(*second));
  // Asking again on the holding session checks pg_locks instead of taking
  // the (re-entrant) lock once more: one unlock is then enough.
  EXPECT_TRUE(leader.Ensure(*first));
  EXPECT_TRUE(leader.Ensure(*first));
  const std::string kHeld =
      "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted "
      "AND classid = 1936023924 AND objid = 2002875491 AND objsubid = 1";
  EXPECT_EQ(db.Scalar(kHeld), "1");
  ReleaseLeaderLock(*first);
  EXPECT_EQ(db.Scalar(kHeld), "0");
  EXPECT_TRUE(other.Ensure(*second));
  EXPECT_FALSE(leader.Ensure(*first));
  // A session that ends takes the lock with it.
  second->disconnect();
  ASSERT_TRUE(testing::WaitFor([&] { return db.Scalar(kHeld) == "0"; }, 5s));
  EXPECT_TRUE(leader.Ensure(*first));
}

double Series(const PublishedText& text, const std::string& series) {
  return testing::Sample(*text.Current(), series);
}

TEST(CleanupWorkerTest, BacksOffWhileBatchesFailThenRecovers) {
  ScratchDatabase db("sw_cleanup_backoff");
  Seed(db);
  config::Config config = CleanupConfig(db, 100);
  config.cleanup.interval = 100ms;
  auto locker = db.Connect();
  auto locker_tx = std::make_unique<pqxx::work>(*locker);
  locker_tx->exec("LOCK TABLE seats IN SHARE MODE");

  auto text = std::make_shared<PublishedText>();
  CleanupWorker worker(config, CleanupMetrics(config.cleanup), text);
  worker.Start();
  const std::string kLockTimeouts = "seatwatch_cleanup_batches_total{result=\"lock_timeout\"}";
  ASSERT_TRUE(testing::WaitFor([&] { return Series(*text, kLockTimeouts) >= 1; }, 10s));
  std::this_thread::sleep_for(2s);
  // Without backoff, 100ms apart, this would be about 20 failed batches. With
  // it the waits are 200, 400, 800, 1600ms: at most 5 in these ~2 seconds.
  double failed = Series(*text, kLockTimeouts);
  EXPECT_GE(failed, 2);
  EXPECT_LE(failed, 5);
  EXPECT_EQ(Series(*text, "seatwatch_cleanup_freed_total"), 0);
  EXPECT_EQ(Series(*text, "seatwatch_cleanup_leader"), 1);  // it still leads; it only waits

  locker_tx->abort();
  ASSERT_TRUE(
      testing::WaitFor([&] { return Series(*text, "seatwatch_cleanup_freed_total") == 7; }, 10s))
      << *text->Current();
  EXPECT_GT(Series(*text, "seatwatch_cleanup_last_success_timestamp_seconds"), 0);
  CleanupMetrics final_metrics = worker.Stop();
  EXPECT_EQ(final_metrics.freed(), 7u);
  EXPECT_FALSE(final_metrics.leader());
  EXPECT_EQ(Series(*text, "seatwatch_cleanup_leader"), 0);
  // Stopped: the lock is released and the connection closed.
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND database = "
                      "(SELECT oid FROM pg_database WHERE datname = current_database())"),
            "0");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM pg_stat_activity "
                      "WHERE application_name = 'sw-run-test-cleanup'"),
            "0");
}

}  // namespace
}  // namespace seatwatch::cleanup
