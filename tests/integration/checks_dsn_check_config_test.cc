// --check-config with the checks lane's own DSN (SEATWATCH_CHECKS_DSN): it
// names each lane's DSN masked, proves the entries' columns where the checks
// lane reads (not on [database] dsn), says whether each lane reaches a
// primary or a standby, and never prints a password.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "support/daemon_process.h"
#include "support/scratch_db.h"
#include "support/standby.h"
#include "support/test_config.h"
#include "support/test_env.h"

namespace seatwatch {
namespace {

using namespace std::chrono_literals;
using testing::DaemonProcess;
using testing::ScratchDatabase;
using testing::WaitFor;

constexpr const char* kSecret = "TopSecret_checks_zz";

class ChecksDsnCheckConfigTest : public ::testing::Test {
 protected:
  ChecksDsnCheckConfigTest()
      : db_("sw_checks_dsn"), dir_(testing::MakeTempDir("seatwatch-checks-dsn")) {
    config_ = testing::WriteShippedConfig(dir_, "1s", testing::FreePort());
  }

  // --check-config to its end: the exit code, the output in *log.
  int CheckConfig(const std::vector<std::string>& env, std::string* log) {
    DaemonProcess process({"--config", config_, "--check-config"}, env);
    bool ended = process.WaitExit(60s);
    *log = process.Log();
    EXPECT_TRUE(ended) << *log;
    EXPECT_EQ(log->find(kSecret), std::string::npos) << "the output shows the password:\n" << *log;
    return process.Stop();
  }

  static bool Has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
  }

  ScratchDatabase db_;
  std::string dir_;
  std::string config_;
};

TEST_F(ChecksDsnCheckConfigTest, NamesEachLaneAndProvesTheQueriesWhereTheChecksLaneReads) {
  std::string log;
  // Trust authentication: the password is never asked for, only shown masked.
  ASSERT_EQ(CheckConfig({"SEATWATCH_DSN=" + db_.dsn(),
                         "SEATWATCH_CHECKS_DSN=" + db_.dsn() + " password=" + kSecret +
                             " target_session_attrs=prefer-standby"},
                        &log),
            0)
      << log;
  EXPECT_TRUE(Has(log, "checks lane: ")) << log;
  EXPECT_TRUE(Has(log, "password=**** target_session_attrs=prefer-standby (may be a standby)\n")) << log;
  EXPECT_TRUE(Has(log, "locks lane, cleanup: ")) << log;
  EXPECT_TRUE(Has(log, "(needs the primary)\n")) << log;
  EXPECT_TRUE(Has(log, "checks lane reaches a primary\n")) << log;
  EXPECT_TRUE(Has(log, "locks lane, cleanup reach a primary\n")) << log;
  EXPECT_TRUE(Has(log, "every query runs and returns its configured columns")) << log;
  EXPECT_FALSE(Has(log, "warning:")) << log;

  // The entries run on the checks lane: a checks DSN whose database lacks
  // the booking schema fails the check, though [database] dsn has it.
  ScratchDatabase empty("sw_checks_dsn_empty", ScratchDatabase::Schema::kNone);
  EXPECT_EQ(CheckConfig({"SEATWATCH_DSN=" + db_.dsn(), "SEATWATCH_CHECKS_DSN=" + empty.dsn()}, &log), 2) << log;
  EXPECT_TRUE(Has(log, "invariant.rows.table: table seats does not exist")) << log;
  EXPECT_TRUE(Has(log, "holds.sql: ")) << log;
  EXPECT_FALSE(Has(log, "every query runs")) << log;
  // And the other way round: the checks DSN is the one that counts.
  EXPECT_EQ(CheckConfig({"SEATWATCH_DSN=" + empty.dsn(), "SEATWATCH_CHECKS_DSN=" + db_.dsn()}, &log), 0) << log;
  EXPECT_TRUE(Has(log, "every query runs and returns its configured columns")) << log;
}

TEST_F(ChecksDsnCheckConfigTest, AnUnreachableChecksDsnIsNamedMaskedAndTheOtherLanesStillChecked) {
  std::string log;
  ASSERT_EQ(CheckConfig({"SEATWATCH_DSN=" + db_.dsn(),
                         std::string("SEATWATCH_CHECKS_DSN=host=/nonexistent-seatwatch dbname=x password=") + kSecret},
                        &log),
            0)
      << log;
  EXPECT_TRUE(Has(log, "database host=/nonexistent-seatwatch dbname=x password=**** (checks lane) not reachable; "
                       "query columns not verified: "))
      << log;
  EXPECT_TRUE(Has(log, "locks lane, cleanup reach a primary\n")) << log;

  // A bad one is a config error naming the variable, its password not shown.
  EXPECT_EQ(CheckConfig({"SEATWATCH_DSN=" + db_.dsn(),
                         std::string("SEATWATCH_CHECKS_DSN=host='unterminated password=") + kSecret},
                        &log),
            2)
      << log;
  EXPECT_TRUE(Has(log, "SEATWATCH_CHECKS_DSN: checks.dsn: cannot parse database DSN")) << log;
}

TEST_F(ChecksDsnCheckConfigTest, SaysWhichLaneReachesAStandby) {
  testing::ScratchStandby standby;
  standby.WaitReplayed();
  std::string log;
  ASSERT_EQ(CheckConfig({"SEATWATCH_DSN=" + db_.dsn(), "SEATWATCH_CHECKS_DSN=" + standby.Dsn(db_.name())}, &log), 0)
      << log << standby.Log();
  EXPECT_TRUE(Has(log, "checks lane reaches a standby (in recovery)\n")) << log;
  EXPECT_TRUE(Has(log, "locks lane, cleanup reach a primary\n")) << log;
  // The booking pack's queries run on a standby as they are.
  EXPECT_TRUE(Has(log, "every query runs and returns its configured columns")) << log;

  // [database] dsn on the standby: the lanes that need the primary are warned of.
  ASSERT_EQ(CheckConfig({"SEATWATCH_DSN=" + standby.Dsn(db_.name())}, &log), 0) << log;
  EXPECT_TRUE(Has(log, "checks lane reaches a standby (in recovery)\n")) << log;
  EXPECT_TRUE(Has(log, "warning: locks lane, cleanup reach a standby (in recovery): the cleanup frees nothing "
                       "and the change feed is off there; point [database] dsn at the primary\n"))
      << log;
}

}  // namespace
}  // namespace seatwatch
