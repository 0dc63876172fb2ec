// The server facts against the scratch primary, and the recovery-conflict
// retry with a conflict a primary can fake: SQLSTATE 40001 with the
// standby's message, raised by the check's own query.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include <pqxx/except>

#include "checks/registry.h"
#include "db/server_facts.h"
#include "metrics/snapshot.h"
#include "poll/poller.h"
#include "support/check_status.h"
#include "support/daemon_process.h"
#include "support/scratch_db.h"
#include "support/test_config.h"
#include "support/test_env.h"

namespace seatwatch {
namespace {

using namespace std::chrono_literals;
using testing::FindCheck;
using testing::ScratchDatabase;

TEST(ServerFactsTest, PrimaryIsNotInRecoveryOnTimelineOne) {
  ScratchDatabase db("sw_facts_primary", ScratchDatabase::Schema::kNone);
  auto connection = db.Connect();
  db::ServerFactsReader reader("checks");
  db::ServerFacts facts = reader.Read(*connection);
  EXPECT_FALSE(facts.in_recovery);
  EXPECT_EQ(facts.replica_lag_seconds, 0);
  ASSERT_FALSE(facts.system_identifier.empty());
  EXPECT_EQ(facts.system_identifier,
            db.Scalar("SELECT system_identifier FROM pg_control_system()"));
  EXPECT_EQ(facts.timeline, 1u);
  EXPECT_TRUE(reader.reads_identity());
}

// pg_proc is per database: the revoke stays in the test's own database.
TEST(ServerFactsTest, RevokedIdentityFallsBackOnceAndStillReadsRecovery) {
  ScratchDatabase db("sw_facts_revoked", ScratchDatabase::Schema::kNone);
  db.Exec("DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'sw_facts_plain') "
          "THEN CREATE ROLE sw_facts_plain LOGIN; END IF; END $$");
  db.Exec("REVOKE EXECUTE ON FUNCTION pg_control_system() FROM PUBLIC");
  pqxx::connection connection(db.dsn() + " user=sw_facts_plain");
  db::ServerFactsReader reader("locks");
  ::testing::internal::CaptureStderr();
  db::ServerFacts first = reader.Read(connection);
  db::ServerFacts second = reader.Read(connection);
  std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(reader.reads_identity());
  for (const auto& facts : {first, second}) {
    EXPECT_FALSE(facts.in_recovery);
    EXPECT_EQ(facts.replica_lag_seconds, 0);
    EXPECT_EQ(facts.system_identifier, "");
    EXPECT_EQ(facts.timeline, 0u);
  }
  std::size_t at = log.find("failovers are not counted");
  EXPECT_NE(at, std::string::npos) << log;
  EXPECT_EQ(log.find("failovers are not counted", at + 1), std::string::npos) << "logged once";
  EXPECT_NE(log.find("lane=locks"), std::string::npos) << log;
}

TEST(ServerFactsTest, PollerReportsItsLanesServer) {
  ScratchDatabase db("sw_facts_poller", ScratchDatabase::Schema::kNone);
  std::string dir = testing::MakeTempDir("seatwatch-sql");
  testing::WriteFile(dir + "/seven.sql", "SELECT 7 AS n");
  config::Config config = testing::ConfigFromToml(
      "[locks]\nenabled = false\n[holds]\nenabled = false\n"
      "[[metric]]\nname = \"seven\"\nsql = \"" + dir + "/seven.sql\"\nvalue = \"n\"\n",
      db.dsn());
  metrics::SnapshotStore store;
  poll::Poller poller(config, checks::BuildChecks(config), store, "test");
  metrics::PollState state = poller.RunAllOnce();
  ASSERT_EQ(state.servers.size(), 1u);
  EXPECT_EQ(state.servers[0].lane, "checks");
  EXPECT_FALSE(state.servers[0].facts.in_recovery);
  EXPECT_EQ(state.servers[0].facts.timeline, 1u);
  EXPECT_TRUE(FindCheck(state, "seven").success);
}

TEST(ServerFactsTest, OnceReportSaysPrimary) {
  ScratchDatabase db("sw_facts_once");
  std::string dir = testing::MakeTempDir("seatwatch-once");
  std::string config = testing::WriteShippedConfig(dir, "1s", testing::FreePort());
  testing::DaemonProcess once({"--config", config, "--once"}, {"SEATWATCH_DSN=" + db.dsn()});
  ASSERT_TRUE(once.WaitExit(30s));
  EXPECT_EQ(once.Stop(), 0) << once.Log();
  EXPECT_NE(once.Log().find(" (reachable)\nserver: primary\n\nINVARIANTS\n"), std::string::npos)
      << once.Log();
}

// The conflict a standby raises, faked on the primary by the check's query.
// The check's transaction is read-only, so it cannot count its attempts in a
// table or a sequence: a session advisory lock, which outlives the aborted
// transaction, marks the session that has raised the conflict already.
class RecoveryConflictTest : public ::testing::Test {
 protected:
  RecoveryConflictTest()
      : db_("sw_facts_conflict", ScratchDatabase::Schema::kNone),
        dir_(testing::MakeTempDir("seatwatch-sql")) {
    db_.Exec(R"sql(
      CREATE FUNCTION seatwatch_raise_conflict() RETURNS int LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION USING ERRCODE = '40001',
          MESSAGE = 'canceling statement due to conflict with recovery',
          DETAIL = 'User query might have needed to see row versions that must be removed.';
      END $$;
      CREATE FUNCTION seatwatch_conflict_once() RETURNS int LANGUAGE plpgsql AS $$
      BEGIN
        IF NOT EXISTS (SELECT FROM pg_locks WHERE locktype = 'advisory'
                       AND pid = pg_backend_pid() AND objid = 4242) THEN
          PERFORM pg_advisory_lock(4242);
          PERFORM seatwatch_raise_conflict();
        END IF;
        RETURN 1;
      END $$;
    )sql");
    testing::WriteFile(dir_ + "/once.sql", "SELECT seatwatch_conflict_once() AS n");
    testing::WriteFile(dir_ + "/always.sql", "SELECT seatwatch_raise_conflict() AS n");
    testing::WriteFile(dir_ + "/seven.sql", "SELECT 7 AS n");
  }

  std::string Metric(const std::string& name, const std::string& file) {
    return "[[metric]]\nname = \"" + name + "\"\nsql = \"" + dir_ + "/" + file +
           "\"\nvalue = \"n\"\n";
  }

  metrics::PollState PollOnce(const std::string& metrics) {
    config::Config config = testing::ConfigFromToml(
        "[locks]\nenabled = false\n[holds]\nenabled = false\n" + metrics, db_.dsn());
    metrics::SnapshotStore store;
    poll::Poller poller(config, checks::BuildChecks(config), store, "test");
    return poller.RunAllOnce();
  }

  ScratchDatabase db_;
  std::string dir_;
};

TEST_F(RecoveryConflictTest, ConflictOnceIsCountedAndRetriedInTheSamePoll) {
  ::testing::internal::CaptureStderr();
  // once_b shares once_a's query: it reuses the retry's result, not the
  // conflict cached with the first attempt.
  metrics::PollState state = PollOnce(Metric("once_a", "once.sql") + Metric("once_b", "once.sql") +
                                      Metric("seven", "seven.sql"));
  std::string log = ::testing::internal::GetCapturedStderr();
  const auto& once_a = FindCheck(state, "once_a");
  ASSERT_TRUE(once_a.success) << once_a.last_error;
  EXPECT_EQ(once_a.errors.at("recovery_conflict"), 1u);
  EXPECT_EQ(once_a.last_reason, "");
  ASSERT_NE(once_a.rendered, nullptr);
  EXPECT_EQ(testing::Sample(once_a.rendered->Text(), "seatwatch_once_a"), 1);
  const auto& once_b = FindCheck(state, "once_b");
  EXPECT_TRUE(once_b.success) << once_b.last_error;
  EXPECT_EQ(once_b.errors.at("recovery_conflict"), 0u);
  const auto& seven = FindCheck(state, "seven");
  EXPECT_TRUE(seven.success) << seven.last_error;
  for (const auto& [reason, count] : seven.errors) EXPECT_EQ(count, 0u) << reason;
  EXPECT_TRUE(state.database_up);
  EXPECT_NE(log.find("level=warn msg=\"check cancelled by a recovery conflict; running it again\" "
                     "check=once_a"),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find("msg=\"check failed\""), std::string::npos) << log;
}

TEST_F(RecoveryConflictTest, ConflictEveryTimeFailsAfterOneRetry) {
  metrics::PollState state =
      PollOnce(Metric("always", "always.sql") + Metric("seven", "seven.sql"));
  const auto& always = FindCheck(state, "always");
  EXPECT_FALSE(always.success);
  EXPECT_EQ(always.errors.at("recovery_conflict"), 2u) << "the attempt and its retry";
  EXPECT_EQ(always.last_reason, "recovery_conflict");
  EXPECT_NE(always.last_error.find("due to conflict with recovery"), std::string::npos)
      << always.last_error;
  EXPECT_EQ(always.errors.at("sql"), 0u);
  const auto& seven = FindCheck(state, "seven");
  EXPECT_TRUE(seven.success) << seven.last_error;
  EXPECT_EQ(seven.errors.at("recovery_conflict"), 0u);
}

}  // namespace
}  // namespace seatwatch
