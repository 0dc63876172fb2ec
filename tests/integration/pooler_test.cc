// seatwatch through a real PgBouncer in transaction pool mode (pool of two
// server connections, so the lanes' transactions share them), as a role
// whose own defaults are statement_timeout = 1min, lock_timeout = 5s: every
// check transaction still runs with the configured 5 s / 100 ms and read
// only, the locks check keeps working poll after poll, --check-config says
// what it found, the cleanup refuses to lead, and incremental checks
// recheck through it (the change feed direct).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include <pqxx/nontransaction>
#include <pqxx/transaction>

#include "support/daemon_process.h"
#include "support/http_client.h"
#include "support/incremental_daemon.h"
#include "support/pgbouncer.h"
#include "support/scratch_db.h"
#include "support/test_env.h"

namespace seatwatch {
namespace {

using namespace std::chrono_literals;
using testing::DaemonProcess;
using testing::HttpGet;
using testing::PgBouncer;
using testing::Sample;
using testing::ScratchDatabase;
using testing::WaitFor;

constexpr const char* kRole = "seatwatch_pooled";

// What a check transaction runs with, as a [[metric]] with one series per
// setting (milliseconds; read-only as 1 or 0).
constexpr const char* kSettingsSql =
    "SELECT name AS setting, setting::float8 AS value FROM pg_settings "
    "WHERE name IN ('statement_timeout', 'lock_timeout') "
    "UNION ALL SELECT 'transaction_read_only', "
    "CASE WHEN current_setting('transaction_read_only') = 'on' THEN 1 ELSE 0 END";

class PoolerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = std::make_unique<ScratchDatabase>("seatwatch_pooler");
    db_->Exec(std::string("DO $$ BEGIN CREATE ROLE ") + kRole +
              " LOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$");
    // The role's defaults: what a pooled session runs with if seatwatch's
    // connection options are dropped.
    db_->Exec(std::string("ALTER ROLE ") + kRole + " SET statement_timeout = '1min'");
    db_->Exec(std::string("ALTER ROLE ") + kRole + " SET lock_timeout = '5s'");
    db_->Exec(std::string("GRANT pg_monitor TO ") + kRole);
    db_->Exec(std::string("GRANT SELECT ON ALL TABLES IN SCHEMA public TO ") + kRole);
    dir_ = testing::MakeTempDir("seatwatch-pooler");
    testing::WriteFile(dir_ + "/settings.sql", kSettingsSql);
    testing::WriteFile(dir_ + "/seat_count.sql", "SELECT count(*) AS n FROM seats");
    port_ = testing::FreePort();
  }

  void StartBouncer(bool ignore_options = true) {
    bouncer_ = std::make_unique<PgBouncer>(
        PgBouncer::Options{db_->name(), kRole, 2, ignore_options});
  }

  std::string WriteConfig(const std::string& extra) const {
    std::string path = dir_ + "/seatwatch.toml";
    testing::WriteFile(path, "log_level = \"debug\"\n"
                             "[database]\n"
                             "dsn = \"" + bouncer_->dsn() + "\"\n"
                             "application_name = \"sw-pooled\"\n"
                             "[http]\n"
                             "listen = \"127.0.0.1:" + std::to_string(port_) + "\"\n"
                             "[poll]\n"
                             "interval = \"1s\"\n"
                             "[locks]\n"
                             "interval = \"200ms\"\n"
                             "[[metric]]\n"
                             "name = \"session_settings\"\n"
                             "sql = \"" + dir_ + "/settings.sql\"\n"
                             "value = \"value\"\n"
                             "labels = [\"setting\"]\n" + extra);
    return path;
  }

  std::string Metrics() const { return HttpGet(port_, "/metrics").body; }

  // Scrapes until `check` has succeeded in `polls` distinct polls (its last
  // success timestamp moved each time), at most 30 s; calls `each` with the
  // scrape of every new one. Returns how many it saw; `text` is the last
  // scrape.
  int WaitForPolls(const std::string& check, int polls, std::string& text,
                   const std::function<void(const std::string&)>& each = nullptr) const {
    int seen = 0;
    double last = 0;
    WaitFor(
        [&] {
          text = Metrics();
          double at = Sample(
              text, "seatwatch_check_last_success_timestamp_seconds{check=\"" + check + "\"}");
          if (at > last) {
            last = at;
            ++seen;
            if (each) each(text);
          }
          return seen >= polls;
        },
        30s);
    return seen;
  }

  std::string dir_;
  int port_ = 0;
  std::unique_ptr<ScratchDatabase> db_;
  std::unique_ptr<PgBouncer> bouncer_;  // destroyed first: it holds server connections
};

double Setting(const std::string& text, const std::string& name) {
  return Sample(text, "seatwatch_session_settings{setting=\"" + name + "\"}");
}

// Every check transaction runs with [database] statement_timeout and
// lock_timeout and read only, poll after poll, whichever pooled server
// connection it lands on: not with the role's 1min / 5s.
TEST_F(PoolerTest, ChecksRunWithTheConfiguredSettings) {
  StartBouncer();
  DaemonProcess daemon({"--config", WriteConfig("")});
  std::string text;
  int polls = WaitForPolls("session_settings", 4, text, [](const std::string& scrape) {
    EXPECT_EQ(Setting(scrape, "statement_timeout"), 5000) << scrape;
    EXPECT_EQ(Setting(scrape, "lock_timeout"), 100) << scrape;
    EXPECT_EQ(Setting(scrape, "transaction_read_only"), 1) << scrape;
  });
  ASSERT_GE(polls, 4) << daemon.Log() << bouncer_->Log();
  EXPECT_EQ(Sample(text, "seatwatch_up"), 1);
}

// A check blocked on a lock (a migration's ACCESS EXCLUSIVE on the table it
// reads) fails after [database] lock_timeout (100 ms), not the role's 5 s.
TEST_F(PoolerTest, ABlockedCheckFailsAtTheConfiguredLockTimeout) {
  StartBouncer();
  auto holder = db_->Connect();
  pqxx::work lock(*holder);
  lock.exec0("LOCK TABLE seats IN ACCESS EXCLUSIVE MODE");
  DaemonProcess daemon({"--config", WriteConfig("[[metric]]\n"
                                                "name = \"seat_count\"\n"
                                                "sql = \"" + dir_ + "/seat_count.sql\"\n"
                                                "value = \"n\"\n")});
  std::string text;
  ASSERT_TRUE(WaitFor(
      [&] {
        text = Metrics();
        return Sample(text, "seatwatch_check_errors_total{check=\"seat_count\","
                            "reason=\"lock_timeout\"}") >= 1;
      },
      30s))
      << text << daemon.Log();
  double duration = Sample(text, "seatwatch_check_duration_seconds{check=\"seat_count\"}");
  EXPECT_GE(duration, 0.1);
  EXPECT_LT(duration, 1.0) << "waited for the lock as long as the role's lock_timeout";
  lock.abort();
}

// The locks check polls every 200 ms on a session whose transactions land on
// either pooled server connection: no named prepared statement to be missing
// or already there, so it succeeds poll after poll and /api/locks answers.
TEST_F(PoolerTest, TheLocksCheckKeepsWorkingOverManyPolls) {
  StartBouncer();
  // A claim waiting on a row another session holds, both direct: the lock
  // poll sees every backend of the server, whichever connection it runs on.
  db_->Exec("INSERT INTO seats (event_id, seat) VALUES (1, 'A1')");
  auto holder = db_->Connect();
  auto waiter = db_->Connect();
  pqxx::nontransaction hold(*holder);
  hold.exec0("BEGIN");
  hold.exec0("UPDATE seats SET holder = 'first' WHERE event_id = 1 AND seat = 'A1'");
  std::thread claim([&waiter] {
    try {
      pqxx::work tx(*waiter);
      tx.exec0("UPDATE seats SET holder = 'second' WHERE event_id = 1 AND seat = 'A1'");
    } catch (const std::exception&) {
    }
  });
  struct Release {
    pqxx::nontransaction& hold;
    std::thread& claim;
    ~Release() {
      hold.exec0("ROLLBACK");
      claim.join();
    }
  } release{hold, claim};
  DaemonProcess daemon({"--config", WriteConfig("")});
  std::string text;
  int polls = WaitForPolls("locks", 25, text);
  ASSERT_GE(polls, 25) << "locks check succeeded in " << polls << " polls\n"
                       << text << daemon.Log();
  EXPECT_EQ(Sample(text, "seatwatch_check_success{check=\"locks\"}"), 1);
  EXPECT_EQ(Sample(text, "seatwatch_lock_waiting_sessions"), 1) << text;
  for (const char* reason : {"sql", "timeout", "lock_timeout", "connection"}) {
    double errors = Sample(
        text,
        std::string("seatwatch_check_errors_total{check=\"locks\",reason=\"") + reason + "\"}");
    EXPECT_EQ(errors, 0) << reason << "\n" << daemon.Log();
  }
  EXPECT_EQ(daemon.Log().find("prepared statement"), std::string::npos) << daemon.Log();
  testing::HttpResponse locks = HttpGet(port_, "/api/locks");
  EXPECT_EQ(locks.status, 200) << locks.body;
}

// Incremental checks through the pooler, the change feed direct as it must
// be: rechecks up to five times a second, each transaction on whichever of
// the two pooled server connections is free (the locks lane shares them),
// with nothing session-level to be missing there (a named prepared
// statement would be: "prepared statement ... does not exist"). Each of
// the six violations is seen and cleared by rechecks, no full pass runs
// meanwhile, and no check run fails.
TEST_F(PoolerTest, IncrementalRechecksWorkOverManyCycles) {
  testing::SeedBookingSeats(*db_, 1, 1, 1000);
  testing::RunChangesSetup(*db_);
  db_->Exec(std::string("GRANT SELECT ON ALL TABLES IN SCHEMA public TO ") + kRole);
  StartBouncer();
  std::string config = testing::WriteIncrementalConfig(
      dir_, port_, "enabled = true\ninterval = \"200ms\"\n");
  std::string text = testing::ReadFile(config);
  const std::string off = "[locks]\nenabled = false";
  text.replace(text.find(off), off.size(), "[locks]\nenabled = true");
  testing::WriteFile(config, text);
  DaemonProcess daemon({"--config", config, "--log-level", "debug"},
                       {"SEATWATCH_DSN=" + bouncer_->dsn(),
                        "SEATWATCH_CHANGES_DSN=" + db_->changes_dsn()});
  std::string scrape;
  ASSERT_TRUE(WaitFor(
      [&] {
        scrape = Metrics();
        return Sample(scrape, "seatwatch_check_mode{check=\"booking_reconciliation\","
                              "mode=\"incremental\"}") == 1;
      },
      60s))
      << scrape << daemon.Log() << bouncer_->Log();
  double full_passes = testing::AllPasses(scrape, "booking_reconciliation");
  auto injector = db_->Connect();
  for (const auto& v : testing::SixViolations({1, 2, 3, 4, 5, 6})) {
    if (!v.prepare_sql.empty()) db_->Exec(v.prepare_sql);
    db_->Exec(v.inject_sql);
    ASSERT_TRUE(WaitFor([&] { return Sample(scrape = Metrics(), v.series()) == v.count; }, 20s))
        << v.invariant << "\n" << scrape << daemon.Log();
    db_->Exec(v.repair_sql);
    ASSERT_TRUE(WaitFor([&] { return testing::AllInvariantsOk(scrape = Metrics()); }, 20s))
        << v.invariant << " repaired\n" << scrape << daemon.Log();
  }
  // Seen and cleared by rechecks, not by full passes.
  EXPECT_EQ(testing::AllPasses(scrape, "booking_reconciliation"), full_passes) << scrape;
  EXPECT_GT(Sample(scrape, "seatwatch_changes_recheck_seconds_total"), 0) << scrape;
  for (const char* check : {"booking_reconciliation", "event_inventory", "locks"}) {
    for (const auto& [series, errors] : testing::SeriesWithPrefix(
             scrape, std::string("seatwatch_check_errors_total{check=\"") + check + "\"")) {
      EXPECT_EQ(errors, 0) << series << "\n" << daemon.Log();
    }
  }
  EXPECT_EQ(daemon.Log().find("prepared statement"), std::string::npos) << daemon.Log();
}

// --check-config finds the pooler (the role's defaults are in force instead of
// the connection options) and says what seatwatch does through it.
TEST_F(PoolerTest, CheckConfigSaysItGoesThroughAPooler) {
  StartBouncer();
  std::string output;
  int status = testing::RunCommand(
      testing::SeatwatchBinary() + " --config " + WriteConfig("") + " --check-config", &output);
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find("through a transaction pooler: timeouts and read-only are set per "
                        "transaction (SET LOCAL); the change feed and the cleanup need a direct "
                        "connection"),
            std::string::npos)
      << output;
  EXPECT_NE(output.find("lock_timeout 5000ms (not 100ms)"), std::string::npos) << output;
  EXPECT_NE(output.find("every query runs and returns its configured columns"), std::string::npos)
      << output;
}

// PgBouncer's default refuses libpq's `options`: --check-config says how to
// fix it and fails, where it used to exit 0 with "not reachable".
TEST_F(PoolerTest, CheckConfigExplainsTheRefusedOptionsParameter) {
  StartBouncer(false);
  std::string output;
  int status = testing::RunCommand(
      testing::SeatwatchBinary() + " --config " + WriteConfig("") + " --check-config", &output);
  EXPECT_NE(status, 0) << output;
  EXPECT_NE(output.find("unsupported startup parameter: options"), std::string::npos) << output;
  EXPECT_NE(output.find("set ignore_startup_parameters = options in pgbouncer.ini"),
            std::string::npos)
      << output;
}

// The daemon's log says the same when every connection fails that way.
TEST_F(PoolerTest, TheDaemonExplainsTheRefusedOptionsParameter) {
  StartBouncer(false);
  DaemonProcess daemon({"--config", WriteConfig("")});
  std::string log;
  ASSERT_TRUE(WaitFor(
      [&] {
        try {
          log = daemon.Log();
        } catch (const std::exception&) {  // not written yet
        }
        return log.find("cannot connect to database") != std::string::npos;
      },
      20s))
      << log;
  EXPECT_EQ(Sample(Metrics(), "seatwatch_up"), 0);
  EXPECT_NE(log.find("unsupported startup parameter: options"), std::string::npos) << log;
  EXPECT_NE(log.find("set ignore_startup_parameters = options in pgbouncer.ini"), std::string::npos)
      << log;
}

// The cleanup's leader lock is a session-level advisory lock, which a
// transaction pooler would leave on whichever server connection took it: the
// cleanup refuses to lead there and says why; nobody holds the lock.
TEST_F(PoolerTest, TheCleanupRefusesToLeadThroughAPooler) {
  StartBouncer();
  std::string queries = testing::SourceDir() + "/queries/booking/";
  DaemonProcess daemon({"--config",
                        WriteConfig("[holds]\n"
                                    "sql = \"" + queries + "holds.sql\"\n"
                                    "[cleanup]\n"
                                    "enabled = true\n"
                                    "interval = \"1s\"\n"
                                    "sql = \"" + queries + "cleanup_expired_holds.sql\"\n"
                                    "dry_run_sql = \"" + queries +
                                    "cleanup_expired_holds.dry_run.sql\"\n")});
  // The cleanup's first runs, whatever they say.
  ASSERT_TRUE(
      WaitFor([&] { return !std::isnan(Sample(Metrics(), "seatwatch_cleanup_leader")); }, 20s))
      << daemon.Log();
  std::this_thread::sleep_for(3s);
  std::string text = Metrics();
  std::string log = daemon.Log();
  EXPECT_NE(log.find("cleanup: [database] dsn goes through a connection pooler"), std::string::npos)
      << log;
  EXPECT_EQ(Sample(text, "seatwatch_cleanup_leader"), 0) << text;
  EXPECT_EQ(db_->Scalar("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"), "0");
}

}  // namespace
}  // namespace seatwatch
