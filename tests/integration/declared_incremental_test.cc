// Declared checks in incremental mode on tables set up by the script
// `seatwatch --print-setup` writes, against the scratch PostgreSQL: a
// partitioned table (a change in a partition counts for the table the
// config names, published through the root) and a ledger whose entries have
// no primary key (REPLICA IDENTITY FULL): an insert that breaks the
// invariant and a delete that repairs it are each found through the change
// feed, with no full pass in between and nothing it could not map.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "support/daemon_process.h"
#include "support/daemon_test.h"
#include "support/incremental_daemon.h"
#include "support/test_env.h"

namespace seatwatch {
namespace {

using namespace std::chrono_literals;
using testing::DaemonProcess;
using testing::Sample;
using testing::WaitFor;

constexpr const char* kSchema =
    "CREATE TABLE workshop (id integer PRIMARY KEY, capacity integer NOT NULL);\n"
    "CREATE TABLE registration (workshop_id integer NOT NULL, fan text NOT NULL)\n"
    "  PARTITION BY HASH (workshop_id);\n"
    "CREATE TABLE registration_0 PARTITION OF registration\n"
    "  FOR VALUES WITH (MODULUS 2, REMAINDER 0);\n"
    "CREATE TABLE registration_1 PARTITION OF registration\n"
    "  FOR VALUES WITH (MODULUS 2, REMAINDER 1);\n"
    "CREATE INDEX ON registration (workshop_id);\n"
    "INSERT INTO workshop SELECT w, 3 FROM generate_series(1, 8) w;\n"
    "INSERT INTO registration SELECT w, 'fan' || n FROM generate_series(1, 8) w,\n"
    "  generate_series(1, 2) n;\n"
    "CREATE TABLE account (id integer PRIMARY KEY, balance numeric(12,2) NOT NULL);\n"
    "CREATE TABLE entry (account_id integer NOT NULL, amount numeric(12,2) NOT NULL);\n"
    "INSERT INTO account SELECT a, 10.50 FROM generate_series(1, 5) a;\n"
    "INSERT INTO entry SELECT a, 10.50 FROM generate_series(1, 5) a;\n";

constexpr const char* kChecks =
    "[[invariant]]\n"
    "name = \"workshop_overbooked\"\n"
    "help = \"A workshop has more registrations than its capacity\"\n"
    "kind = \"at_most\"\n"
    "key = [\"workshop_id\"]\n"
    "rows = { table = \"registration\", columns = [\"workshop_id\"] }\n"
    "limit = { table = \"workshop\", columns = [\"id\"], column = \"capacity\" }\n"
    "\n"
    "[[invariant]]\n"
    "name = \"balance_drift\"\n"
    "help = \"An account's balance is not the sum of its entries\"\n"
    "kind = \"counter\"\n"
    "key = [\"id\"]\n"
    "table = \"account\"\n"
    "columns = [\"id\"]\n"
    "column = \"balance\"\n"
    "rows = { table = \"entry\", columns = [\"account_id\"], sum = \"amount\" }\n"
    "\n"
    "[[metric]]\n"
    "check = \"workshop_overbooked\"\n"
    "name = \"workshop_places\"\n"
    "help = \"Registrations and places per workshop\"\n"
    "kind = \"count\"\n"
    "key = \"workshop_id\"\n"
    "label = \"state\"\n"
    "counts = [\n"
    "  { name = \"registrations\", table = \"registration\" },\n"
    "  { name = \"places\", table = \"workshop\", columns = [\"id\"], sum = \"capacity\" },\n"
    "]\n";

class DeclaredIncrementalTest : public testing::DaemonTest {
 protected:
  DeclaredIncrementalTest()
      : DaemonTest("sw_declared_incremental", "seatwatch-declared-incremental",
                   testing::ScratchDatabase::Schema::kNone) {
    db_.Exec(kSchema);
    config_ = dir_ + "/seatwatch.toml";
    testing::WriteFile(config_, "[http]\nlisten = \"127.0.0.1:" + std::to_string(port_) +
                                    "\"\n\n[poll]\ninterval = \"1s\"\n\n[locks]\nenabled = false\n"
                                    "\n[holds]\nenabled = false\n\n[changes]\nenabled = true\n"
                                    "interval = \"200ms\"\nfull_pass_interval = \"1h\"\n\n" +
                                    kChecks);
  }

  // What a DBA does: --print-setup, then psql.
  void RunPrintedSetup() { testing::RunPrintedSetup(db_, config_, dir_); }

  // --check-config's output (it must pass).
  std::string CheckConfig() {
    DaemonProcess check({"--config", config_, "--check-config"}, DaemonEnv());
    EXPECT_TRUE(check.WaitExit(60s));
    std::string log = check.Log();
    EXPECT_EQ(check.Stop(), 0) << log;
    return log;
  }

  std::vector<std::string> DaemonEnv() const {
    return {"SEATWATCH_DSN=" + db_.dsn(), "SEATWATCH_CHANGES_DSN=" + db_.changes_dsn()};
  }

  double Passes(const std::string& text, const std::string& check) const {
    return testing::AllPasses(text, check);
  }
};

TEST_F(DeclaredIncrementalTest, APartitionsChangesCountForItsTable) {
  // Before the setup, --check-config says what the root and each partition
  // lack.
  std::string log = CheckConfig();
  EXPECT_NE(log.find("the replica identity of the partitioned table registration is not FULL: "
                     "the changes of its partitions, published through it, would carry no old "
                     "key; run: ALTER TABLE registration REPLICA IDENTITY FULL;"),
            std::string::npos)
      << log;
  for (const char* leaf : {"registration_0", "registration_1"}) {
    EXPECT_NE(log.find("the replica identity of " + std::string(leaf) +
                       " (DEFAULT, and it has no primary key) does not carry workshop_id"),
              std::string::npos)
        << log;
  }
  RunPrintedSetup();
  log = CheckConfig();
  EXPECT_EQ(log.find("replica identity of"), std::string::npos) << log;
  DaemonProcess daemon({"--config", config_}, DaemonEnv());
  ASSERT_TRUE(WaitReady()) << daemon.Log();
  std::string text;
  const std::string ok = "seatwatch_invariant_ok{invariant=\"workshop_overbooked\"}";
  ASSERT_TRUE(WaitFor([&] {
    text = Metrics();
    return Sample(text, "seatwatch_changes_up") == 1 &&
           Sample(text, "seatwatch_check_mode{check=\"workshop_overbooked\",mode=\"incremental\"}") ==
               1 &&
           Sample(text, ok) == 1;
  }, 30s)) << text << daemon.Log();
  const double passes = Passes(text, "workshop_overbooked");

  // Workshops 3 and 6 (their rows in either partition) get two more each.
  db_.Exec("INSERT INTO registration VALUES (3, 'x'), (3, 'y'), (6, 'x'), (6, 'y')");
  const std::string three =
      "seatwatch_invariant_violations{invariant=\"workshop_overbooked\",workshop_id=\"3\"}";
  const std::string six =
      "seatwatch_invariant_violations{invariant=\"workshop_overbooked\",workshop_id=\"6\"}";
  ASSERT_TRUE(WaitFor([&] {
    text = Metrics();
    return Sample(text, three) == 1 && Sample(text, six) == 1;
  }, 10s)) << text << daemon.Log();
  EXPECT_EQ(Sample(text, ok), 0) << text;

  // A delete in a partition (REPLICA IDENTITY FULL there) names its key.
  db_.Exec("DELETE FROM registration WHERE workshop_id = 3 AND fan = 'y'");
  ASSERT_TRUE(WaitFor([&] { text = Metrics(); return std::isnan(Sample(text, three)); }, 10s))
      << text << daemon.Log();
  EXPECT_EQ(Sample(text, six), 1) << text;
  EXPECT_EQ(Passes(text, "workshop_overbooked"), passes)
      << "found by a full pass, not by the feed:\n" << text;
  EXPECT_EQ(Sample(text, "seatwatch_full_passes_total{check=\"workshop_overbooked\",reason="
                         "\"unmappable\"}"),
            0)
      << text;
  EXPECT_EQ(daemon.Stop(), 0) << daemon.Log();
}

// A declared metric riding on the check: its counts come from the check's
// pass, and the feed's rechecks update them key by key, with no full pass.
TEST_F(DeclaredIncrementalTest, AMetricRidingOnTheCheckFollowsTheFeed) {
  RunPrintedSetup();
  DaemonProcess daemon({"--config", config_}, DaemonEnv());
  ASSERT_TRUE(WaitReady()) << daemon.Log();
  auto places = [](int workshop, const char* state) {
    return "seatwatch_workshop_places{workshop_id=\"" + std::to_string(workshop) +
           "\",state=\"" + state + "\"}";
  };
  std::string text;
  ASSERT_TRUE(WaitFor([&] {
    text = Metrics();
    return Sample(text, "seatwatch_check_mode{check=\"workshop_places\",mode=\"incremental\"}") ==
               1 &&
           Sample(text, places(5, "registrations")) == 2;
  }, 30s)) << text << daemon.Log();
  for (int workshop = 1; workshop <= 8; ++workshop) {
    EXPECT_EQ(Sample(text, places(workshop, "registrations")), 2) << workshop;
    EXPECT_EQ(Sample(text, places(workshop, "places")), 3) << workshop;
  }
  const double passes = Passes(text, "workshop_places");
  db_.Exec("INSERT INTO registration VALUES (5, 'x'), (5, 'y'), (5, 'z');"
           "UPDATE workshop SET capacity = 10 WHERE id = 7;"
           "DELETE FROM registration WHERE workshop_id = 8");
  ASSERT_TRUE(WaitFor([&] {
    text = Metrics();
    return Sample(text, places(5, "registrations")) == 5 && Sample(text, places(7, "places")) == 10 &&
           Sample(text, places(8, "registrations")) == 0;
  }, 10s)) << text << daemon.Log();
  EXPECT_EQ(Sample(text, places(8, "places")), 3) << text;
  EXPECT_EQ(Sample(text, places(1, "registrations")), 2) << text;
  // The check and the metric read one result: workshop 5 is over.
  EXPECT_EQ(Sample(text, "seatwatch_invariant_violations{invariant=\"workshop_overbooked\","
                         "workshop_id=\"5\"}"),
            1)
      << text;
  EXPECT_EQ(Passes(text, "workshop_places"), passes)
      << "found by a full pass, not by the feed:\n" << text;
  EXPECT_EQ(daemon.Stop(), 0) << daemon.Log();
}

TEST_F(DeclaredIncrementalTest, ALedgerWithoutAPrimaryKeyIsFollowedByTheFeed) {
  RunPrintedSetup();
  EXPECT_EQ(db_.Scalar("SELECT relreplident::text FROM pg_class WHERE oid = 'entry'::regclass"),
            "f");
  DaemonProcess daemon({"--config", config_}, DaemonEnv());
  ASSERT_TRUE(WaitReady()) << daemon.Log();
  std::string text;
  const std::string ok = "seatwatch_invariant_ok{invariant=\"balance_drift\"}";
  ASSERT_TRUE(WaitFor([&] {
    text = Metrics();
    return Sample(text, "seatwatch_check_mode{check=\"balance_drift\",mode=\"incremental\"}") ==
               1 &&
           Sample(text, ok) == 1;
  }, 30s)) << text << daemon.Log();
  const double passes = Passes(text, "balance_drift");

  // An entry posted without its balance: account 4 is off by 2.25.
  db_.Exec("INSERT INTO entry VALUES (4, 2.25)");
  const std::string four = "seatwatch_invariant_violations{invariant=\"balance_drift\",id=\"4\"}";
  ASSERT_TRUE(WaitFor([&] { text = Metrics(); return Sample(text, four) == 2.25; }, 10s))
      << text << daemon.Log();
  // Reverted by a DELETE: entry's old row reaches the feed whole.
  db_.Exec("DELETE FROM entry WHERE account_id = 4 AND amount = 2.25");
  ASSERT_TRUE(WaitFor([&] { text = Metrics(); return Sample(text, ok) == 1; }, 10s))
      << text << daemon.Log();
  EXPECT_TRUE(std::isnan(Sample(text, four))) << text;
  EXPECT_EQ(Passes(text, "balance_drift"), passes)
      << "found by a full pass, not by the feed:\n" << text;
  EXPECT_EQ(daemon.Stop(), 0) << daemon.Log();
}

}  // namespace
}  // namespace seatwatch
