// The [checks] table: where the checks lane reads (a standby may serve it),
// read as strictly as every other table, its DSN validated like [changes]
// dsn, SEATWATCH_CHECKS_DSN, and what --check-config says of each lane.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/args.h"
#include "config/config_error.h"
#include "config/describe.h"
#include "config/overrides.h"
#include "config/parse.h"
#include "config/validate.h"
#include "db/conninfo.h"
#include "poll/lane.h"
#include "unit/config_text.h"

namespace seatwatch::config {
namespace {

std::string EnvErrorOf(Config config, const std::map<std::string, std::string>& values) {
  try {
    ApplyEnvironment(config, Env(values));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

const std::string kStandby =
    "host=db2,db1 port=5433,5432 dbname=booking user=seatwatch target_session_attrs=prefer-standby";

TEST(ChecksDsnConfigTest, EmptyByDefaultSoTheChecksLaneReadsTheDatabaseDsn) {
  Config config = ParseText("");
  EXPECT_EQ(config.checks.dsn, "");
  EXPECT_EQ(config.checks.where.line, 0);
  EXPECT_EQ(config.ChecksDsn(), "postgresql:///booking");
  Config moved = ParseText("[database]\ndsn = \"host=primary dbname=booking\"\n");
  EXPECT_EQ(moved.ChecksDsn(), "host=primary dbname=booking");
  // An empty table, or an empty dsn, is the same.
  Config empty = ParseText("[checks]\n");
  EXPECT_EQ(empty.checks.where.line, 1);
  EXPECT_EQ(empty.ChecksDsn(), "postgresql:///booking");
  EXPECT_EQ(ParseText("[checks]\ndsn = \"\"\n").ChecksDsn(), "postgresql:///booking");
}

TEST(ChecksDsnConfigTest, ParsesTheDsnAndKeepsTheOtherLanesOnTheDatabaseDsn) {
  Config config = ParseText("[database]\ndsn = \"host=db1,db2 dbname=booking target_session_attrs=primary\"\n"
                              "\n[checks]\ndsn = \"" + kStandby + "\"\n");
  EXPECT_EQ(config.checks.dsn, kStandby);
  EXPECT_EQ(config.ChecksDsn(), kStandby);
  EXPECT_EQ(config.checks.where.line, 4);
  EXPECT_EQ(config.database.dsn, "host=db1,db2 dbname=booking target_session_attrs=primary");
  EXPECT_EQ(config.ChangesDsn(), config.database.dsn);
  // A URI works as well.
  EXPECT_EQ(ParseText("[checks]\ndsn = \"postgresql://db2,db1/booking?target_session_attrs=any\"\n")
                .ChecksDsn(),
            "postgresql://db2,db1/booking?target_session_attrs=any");
}

TEST(ChecksDsnConfigTest, UnknownKeysAndWrongTypesNameFileLineAndKey) {
  EXPECT_EQ(ErrorOf("[checks]\ndsm = \"host=standby\"\n"),
            "/etc/seatwatch/seatwatch.toml:2:1: checks.dsm: unknown key");
  EXPECT_EQ(ErrorOf("[checks]\ndsn = \"host=standby\"\nenabled = true\n"),
            "/etc/seatwatch/seatwatch.toml:3:1: checks.enabled: unknown key");
  EXPECT_EQ(ErrorOf("[checks]\ndsn = 5\n"), "/etc/seatwatch/seatwatch.toml:2:7: checks.dsn: must be a string");
  EXPECT_EQ(ErrorOf("checks = \"host=standby\"\n"),
            "/etc/seatwatch/seatwatch.toml:1:10: checks: must be a table");
}

TEST(ChecksDsnConfigTest, DsnMustParseAndNeverShowsItsPassword) {
  std::string error = ErrorOf("\n[checks]\ndsn = \"host='unterminated password=hunter2\"\n");
  EXPECT_EQ(error.rfind("/etc/seatwatch/seatwatch.toml:3:7: checks.dsn: cannot parse database DSN", 0), 0u)
      << error;
  EXPECT_EQ(error.find("hunter2"), std::string::npos) << error;
  error = ErrorOf("[checks]\ndsn = \"host=standby bogus_option=hunter2\"\n");
  EXPECT_EQ(error.rfind("/etc/seatwatch/seatwatch.toml:2:7: checks.dsn: ", 0), 0u) << error;
  EXPECT_EQ(ErrorOf("[checks]\ndsn = \"" + std::string(8193, 'a') + "\"\n"),
            "/etc/seatwatch/seatwatch.toml:2:7: checks.dsn: is 8193 characters long; at most 8192");
}

TEST(ChecksDsnConfigTest, TargetSessionAttrsMustBeOneLibpqKnows) {
  // libpq would refuse it only when connecting: the lane would stay down.
  EXPECT_EQ(ErrorOf("[checks]\ndsn = \"host=a,b target_session_attrs=prefer_standby\"\n"),
            "/etc/seatwatch/seatwatch.toml:2:7: checks.dsn: target_session_attrs \"prefer_standby\" is not "
            "one of any, read-write, read-only, primary, standby, prefer-standby");
  EXPECT_EQ(ErrorOf("[database]\ndsn = \"host=a,b target_session_attrs=Read-Write\"\n"),
            "/etc/seatwatch/seatwatch.toml:2:7: database.dsn: target_session_attrs \"Read-Write\" is not "
            "one of any, read-write, read-only, primary, standby, prefer-standby");
  for (const char* attrs : {"any", "read-write", "read-only", "primary", "standby", "prefer-standby"}) {
    std::string dsn = std::string("host=a,b target_session_attrs=") + attrs;
    EXPECT_EQ(ParseText("[checks]\ndsn = \"" + dsn + "\"\n").checks.dsn, dsn);
    EXPECT_EQ(ParseText("[database]\ndsn = \"" + dsn + "\"\n").database.dsn, dsn);
  }
}

TEST(ChecksDsnConfigTest, EnvironmentOverridesTheDsn) {
  Config config = ParseText("[checks]\ndsn = \"host=file\"\n");
  ApplyEnvironment(config, Env({{"SEATWATCH_CHECKS_DSN", "host=standby user=reader password=hunter2"}}));
  EXPECT_EQ(config.checks.dsn, "host=standby user=reader password=hunter2");
  EXPECT_EQ(config.ChecksDsn(), "host=standby user=reader password=hunter2");
  // SEATWATCH_DSN moves the other lanes only; the checks lane keeps its own.
  ApplyEnvironment(config, Env({{"SEATWATCH_DSN", "host=primary"}}));
  EXPECT_EQ(config.database.dsn, "host=primary");
  EXPECT_EQ(config.ChecksDsn(), "host=standby user=reader password=hunter2");
  // Without [checks] in the file too.
  Config plain = ParseText("");
  ApplyEnvironment(plain, Env({{"SEATWATCH_CHECKS_DSN", "host=standby"}}));
  EXPECT_EQ(plain.ChecksDsn(), "host=standby");
  // Empty is unset, as for SEATWATCH_DSN.
  Config unset = ParseText("");
  ApplyEnvironment(unset, Env({{"SEATWATCH_CHECKS_DSN", ""}, {"SEATWATCH_DSN", "host=primary"}}));
  EXPECT_EQ(unset.checks.dsn, "");
  EXPECT_EQ(unset.ChecksDsn(), "host=primary");
}

TEST(ChecksDsnConfigTest, EnvironmentDsnErrorsNameTheVariable) {
  std::string error =
      EnvErrorOf(ParseText(""), {{"SEATWATCH_CHECKS_DSN", "host='unterminated password=hunter2"}});
  EXPECT_EQ(error.rfind("SEATWATCH_CHECKS_DSN: checks.dsn: cannot parse database DSN", 0), 0u) << error;
  EXPECT_EQ(error.find("hunter2"), std::string::npos) << error;
  EXPECT_EQ(EnvErrorOf(ParseText(""), {{"SEATWATCH_CHECKS_DSN", "host=a target_session_attrs=replica"}}),
            "SEATWATCH_CHECKS_DSN: checks.dsn: target_session_attrs \"replica\" is not one of any, read-write, "
            "read-only, primary, standby, prefer-standby");
}

TEST(ChecksDsnConfigTest, CheckConfigNamesEachLanesDsnMasked) {
  Config config = ParseText("[database]\ndsn = \"host=db1,db2 user=seatwatch password=hunter2 "
                              "target_session_attrs=primary\"\n[checks]\ndsn = \"postgresql://reader:s3cret@db2,"
                              "db1/booking?target_session_attrs=prefer-standby\"\n");
  std::vector<std::string> lines = DescribeLanes(config);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0],
            "checks lane: host=db2,db1 port=, dbname=booking user=reader password=**** "
            "target_session_attrs=prefer-standby (may be a standby)");
  EXPECT_EQ(lines[1],
            "locks lane, cleanup: host=db1,db2 user=seatwatch password=**** target_session_attrs=primary "
            "(needs the primary)");
  for (const auto& line : lines) {
    EXPECT_EQ(line.find("hunter2"), std::string::npos) << line;
    EXPECT_EQ(line.find("s3cret"), std::string::npos) << line;
  }
  EXPECT_TRUE(LaneWarnings(config).empty());

  // Without [checks] dsn the checks lane reads [database] dsn, and says so.
  Config shared = ParseText("[database]\ndsn = \"host=db1 password=hunter2\"\n");
  lines = DescribeLanes(shared);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0],
            "checks lane: host=db1 password=**** (that of [database]; set [checks] dsn to read a standby)");
  EXPECT_EQ(lines[1], "locks lane, cleanup: host=db1 password=**** (needs the primary)");
  EXPECT_TRUE(LaneWarnings(shared).empty());

  // The environment's DSN is the one shown, masked.
  Config env = ParseText("");
  ApplyEnvironment(env, Env({{"SEATWATCH_CHECKS_DSN", "host=standby password=hunter2"}}));
  EXPECT_EQ(DescribeLanes(env)[0], "checks lane: host=standby password=**** (may be a standby)");
}

std::vector<std::string> WarningsOf(const std::string& toml) { return LaneWarnings(ParseText(toml)); }

std::string ChecksWith(const std::string& attrs) {
  return "[checks]\ndsn = \"host=db2,db1 target_session_attrs=" + attrs + "\"\n";
}

std::string DatabaseWith(const std::string& attrs) {
  return "[database]\ndsn = \"postgresql://u:hunter2@db1,db2/booking?target_session_attrs=" + attrs + "\"\n";
}

// What a read-only lane's session asks libpq for when the DSN says `attrs`:
// libpq's read-write and read-only tests look at the session's own
// default_transaction_read_only, which seatwatch's read-only sessions set,
// so BuildConninfo may ask for the server's role (primary, standby) instead.
std::string ReadOnlySessionAttrs(const std::string& attrs) {
  db::SessionSettings settings;
  settings.read_only = true;
  return TargetSessionAttrs(db::BuildConninfo("target_session_attrs=" + attrs, settings));
}

const std::string kNeverStandby = "the checks lane will never use a standby";

TEST(ChecksDsnConfigTest, WarnsWhenTheChecksLaneCanNeverUseAStandby) {
  EXPECT_EQ(WarningsOf(ChecksWith("primary")),
            std::vector<std::string>{"warning: [checks] dsn has target_session_attrs=primary: " + kNeverStandby});
  for (const char* attrs : {"any", "standby", "prefer-standby"}) {
    EXPECT_TRUE(WarningsOf(ChecksWith(attrs)).empty()) << attrs;
  }
  EXPECT_TRUE(WarningsOf("[checks]\ndsn = \"host=db2\"\n").empty());
  // Without [checks] dsn the checks lane shares [database]'s: primary there
  // is right, not a warning.
  EXPECT_TRUE(WarningsOf("[database]\ndsn = \"host=a,b target_session_attrs=primary\"\n").empty());
}

TEST(ChecksDsnConfigTest, ReadWriteAndReadOnlyAreJudgedAsTheChecksLaneSessionAsksForThem) {
  EXPECT_EQ(ReadOnlySessionAttrs("read-write"), "primary");
  EXPECT_EQ(WarningsOf(ChecksWith("read-write")),
            std::vector<std::string>{"warning: [checks] dsn has target_session_attrs=read-write: " + kNeverStandby});
  EXPECT_EQ(ReadOnlySessionAttrs("read-only"), "standby");
  EXPECT_TRUE(WarningsOf(ChecksWith("read-only")).empty());
}

TEST(ChecksDsnConfigTest, WarnsWhenTheDatabaseDsnMayReachAStandby) {
  // The cleanup's session is writable: read-only keeps its word there.
  for (const char* attrs : {"standby", "read-only", "prefer-standby"}) {
    std::vector<std::string> warnings = WarningsOf(DatabaseWith(attrs));
    ASSERT_EQ(warnings.size(), 1u) << attrs;
    EXPECT_EQ(warnings[0], std::string("warning: [database] dsn has target_session_attrs=") + attrs +
                               ": the cleanup and the change feed need the primary");
  }
  for (const char* attrs : {"any", "primary"}) {
    EXPECT_TRUE(WarningsOf(DatabaseWith(attrs)).empty()) << attrs;
  }
  EXPECT_TRUE(WarningsOf("[database]\ndsn = \"host=db1\"\n").empty());
  // Both at once, checks first.
  std::vector<std::string> warnings = WarningsOf(DatabaseWith("standby") + ChecksWith("primary"));
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_EQ(warnings[0].rfind("warning: [checks] dsn", 0), 0u) << warnings[0];
  EXPECT_EQ(warnings[1].rfind("warning: [database] dsn", 0), 0u) << warnings[1];
}

TEST(ChecksDsnConfigTest, ReadWriteInTheDatabaseDsnIsJudgedAsTheLocksLaneAsksForIt) {
  // Asked for as primary: what the locks lane and the cleanup need.
  EXPECT_EQ(ReadOnlySessionAttrs("read-write"), "primary");
  EXPECT_TRUE(WarningsOf(DatabaseWith("read-write")).empty());
  EXPECT_TRUE(WarningsOf(DatabaseWith("read-write") + ChecksWith("prefer-standby")).empty());
}

// What the poller compares on a reload: the checks lane reconnects when
// ChecksDsn() changes, the locks lane when [database] dsn does.
TEST(ChecksDsnConfigTest, EachLaneReadsItsOwnDsn) {
  Config config = ParseText("[database]\ndsn = \"host=primary\"\n[checks]\ndsn = \"host=standby\"\n");
  EXPECT_EQ(poll::LaneDsn(config, poll::Lane::kChecks), "host=standby");
  EXPECT_EQ(poll::LaneDsn(config, poll::Lane::kLocks), "host=primary");
  ApplyEnvironment(config, Env({{"SEATWATCH_CHECKS_DSN", "host=standby2"}}));
  EXPECT_EQ(poll::LaneDsn(config, poll::Lane::kChecks), "host=standby2");
  EXPECT_EQ(poll::LaneDsn(config, poll::Lane::kLocks), "host=primary");
  Config shared = ParseText("[database]\ndsn = \"host=primary\"\n");
  EXPECT_EQ(poll::LaneDsn(shared, poll::Lane::kChecks), "host=primary");
}

TEST(ChecksDsnConfigTest, HelpMentionsTheVariable) {
  EXPECT_NE(cli::UsageText().find("SEATWATCH_CHECKS_DSN"), std::string::npos) << cli::UsageText();
}

}  // namespace
}  // namespace seatwatch::config
