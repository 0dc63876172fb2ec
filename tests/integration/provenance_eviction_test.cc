// Provenance stays within its cap when one transaction touches 100,000 keys:
// the built daemon with a declared incremental check on the scratch
// PostgreSQL, set up by the script `seatwatch --print-setup` writes. One
// INSERT of 100,000 registrations, each for a workshop of its own, is decoded
// and rechecked through the change feed: the check's provenance never holds
// more than 20,000 commits, the 80,000 it cannot hold are counted as evicted,
// and once the rechecks find every key clean it holds none.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
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
    "CREATE TABLE registration (workshop_id integer NOT NULL, fan text NOT NULL,\n"
    "  PRIMARY KEY (workshop_id, fan));\n"
    "INSERT INTO registration SELECT w, 'fan' || n FROM generate_series(1, 8) w,\n"
    "  generate_series(1, 2) n;\n";

constexpr const char* kChecks =
    "[[invariant]]\n"
    "name = \"workshop_overbooked\"\n"
    "help = \"A workshop has more than three registrations\"\n"
    "kind = \"at_most\"\n"
    "key = [\"workshop_id\"]\n"
    "rows = { table = \"registration\", columns = [\"workshop_id\"] }\n"
    "limit = 3\n";

constexpr int kKeys = 100000;
constexpr double kCap = 20000;  // ProvenanceLedger::kMaxCommits

class ProvenanceEvictionTest : public testing::DaemonTest {
 protected:
  ProvenanceEvictionTest()
      : DaemonTest("sw_provenance_eviction", "seatwatch-provenance-eviction",
                   testing::ScratchDatabase::Schema::kNone) {
    db_.Exec(kSchema);
    config_ = dir_ + "/seatwatch.toml";
    testing::WriteFile(config_, "[http]\nlisten = \"127.0.0.1:" + std::to_string(port_) +
                                    "\"\n\n[poll]\ninterval = \"1s\"\n\n[locks]\nenabled = false\n"
                                    "\n[holds]\nenabled = false\n\n[changes]\nenabled = true\n"
                                    "interval = \"200ms\"\nfull_pass_interval = \"1h\"\n\n" +
                                    kChecks);
    testing::RunPrintedSetup(db_, config_, dir_);
  }

  std::vector<std::string> DaemonEnv() const {
    return {"SEATWATCH_DSN=" + db_.dsn(), "SEATWATCH_CHANGES_DSN=" + db_.changes_dsn()};
  }
};

TEST_F(ProvenanceEvictionTest, ATransactionOfAHundredThousandKeysStaysWithinTheCap) {
  DaemonProcess daemon({"--config", config_}, DaemonEnv());
  ASSERT_TRUE(WaitReady()) << daemon.Log();
  const std::string mode =
      "seatwatch_check_mode{check=\"workshop_overbooked\",mode=\"incremental\"}";
  const std::string held = "seatwatch_provenance_commits{check=\"workshop_overbooked\"}";
  const std::string evicted = "seatwatch_provenance_evicted_total{check=\"workshop_overbooked\"}";
  const std::string ok = "seatwatch_invariant_ok{invariant=\"workshop_overbooked\"}";
  std::string text;
  ASSERT_TRUE(WaitFor([&] {
    text = Metrics();
    return Sample(text, mode) == 1 && Sample(text, ok) == 1;
  }, 30s)) << text << daemon.Log();
  EXPECT_EQ(Sample(text, held), 0) << text;
  EXPECT_EQ(Sample(text, evicted), 0) << text;
  double rss_before = Sample(text, "process_resident_memory_bytes");

  db_.Exec("INSERT INTO registration SELECT w, 'bulk' FROM generate_series(1001, " +
           std::to_string(1000 + kKeys) + ") w");
  double most_held = 0, most_rss = rss_before;
  ASSERT_TRUE(WaitFor([&] {
    text = Metrics();
    most_held = std::max(most_held, Sample(text, held));
    most_rss = std::max(most_rss, Sample(text, "process_resident_memory_bytes"));
    return Sample(text, evicted) == kKeys - kCap && Sample(text, held) == 0;
  }, 60s)) << text << daemon.Log();
  std::cerr << "provenance: at most " << most_held << " commits held, "
            << Sample(text, evicted) << " evicted; resident memory " << rss_before / 1048576
            << " MiB before, at most " << most_rss / 1048576 << " MiB after\n";
  EXPECT_LE(most_held, kCap);
  EXPECT_EQ(Sample(text, ok), 1) << "one registration each: no workshop is over";
  // Found by the feed, not by a full pass.
  EXPECT_EQ(Sample(text, "seatwatch_full_passes_total{check=\"workshop_overbooked\","
                         "reason=\"unmappable\"}"),
            0)
      << text;
  EXPECT_EQ(Sample(text, mode), 1) << text;
  EXPECT_EQ(daemon.Stop(), 0) << daemon.Log();
}

}  // namespace
}  // namespace seatwatch
