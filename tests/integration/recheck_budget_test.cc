// [changes] recheck_time_per_minute through the built daemon against the
// scratch PostgreSQL: an incremental entry whose recheck takes 0.2 s (its
// scoped_sql sleeps), under a writer that changes a key every 50 ms so that
// every cycle has a recheck to run. With 6 s a minute (a tenth of the
// session's time) each cycle holds the next one back to 2 s after it
// started; with 60 s a minute nothing is held back and the cycles follow
// the 100 ms interval as fast as the rechecks allow. A dear recheck is seen
// as seatwatch_changes_recheck_seconds_total growing by its 0.2 s, in
// scrapes 20 ms apart. (A cycle that finds nothing to recheck yet, its
// commits not yet flushed, costs nothing and holds nothing back.)
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <pqxx/pqxx>

#include "support/daemon_process.h"
#include "support/daemon_test.h"
#include "support/incremental_daemon.h"
#include "support/test_config.h"
#include "support/test_env.h"

namespace seatwatch {
namespace {

using namespace std::chrono_literals;
using testing::DaemonProcess;
using testing::Sample;
using testing::WaitFor;

// The same rows for the events of $1, after 0.2 s: a dear recheck.
constexpr const char* kSlowScopedSql =
    "SELECT event_id, count(*) FILTER (WHERE status = 'held') AS held\n"
    "  FROM seats WHERE event_id = ANY ($1::int[])\n"
    "   AND (SELECT true FROM pg_sleep(0.2))\n"
    " GROUP BY event_id\n";

const std::string kRecheckSeconds = "seatwatch_changes_recheck_seconds_total";

class RecheckBudgetTest : public testing::DaemonTest {
 protected:
  RecheckBudgetTest() : DaemonTest("sw_recheck_budget", "seatwatch-recheck-budget") {
    db_.Exec("INSERT INTO seats (event_id, seat) SELECT e, 'S' || n "
             "FROM generate_series(1, 3) e, generate_series(1, 10) n");
  }

  void WriteConfig(const std::string& per_minute) {
    testing::WriteFile(dir_ + "/held.sql", testing::kHeldSeatsSql);
    testing::WriteFile(dir_ + "/held.scoped.sql", kSlowScopedSql);
    config_ = dir_ + "/seatwatch.toml";
    testing::WriteFile(
        config_, "[http]\nlisten = \"127.0.0.1:" + std::to_string(port_) +
                     "\"\n\n[poll]\ninterval = \"30s\"\n\n[locks]\nenabled = false\n\n"
                     "[changes]\nenabled = true\ninterval = \"100ms\"\n"
                     "recheck_time_per_minute = \"" + per_minute + "\"\n\n" +
                     testing::kHeldSeatsEntry + "scoped_sql = \"held.scoped.sql\"\n");
    testing::RunPrintedSetup(db_, config_, dir_);
  }

  struct Observed {
    std::vector<double> gaps;  // between consecutive dear rechecks, seconds
    double recheck_seconds = 0;
    double seconds = 0;
    double interval_gauge = 0;
  };

  // Runs the daemon with the budget, changes event 1 every 50 ms for
  // `window`, and collects the rechecks' times.
  Observed Observe(const std::string& per_minute, std::chrono::seconds window) {
    WriteConfig(per_minute);
    DaemonProcess daemon({"--config", config_},
                         {"SEATWATCH_DSN=" + db_.dsn(), "SEATWATCH_CHANGES_DSN=" + db_.changes_dsn()});
    Observed observed;
    if (!WaitFor([&] {
          return Sample(Metrics(), "seatwatch_check_mode{check=\"held_seats\",mode=\"incremental\"}") == 1;
        }, 60s)) {
      ADD_FAILURE() << "never incremental:\n" << Metrics() << daemon.Log();
      return observed;
    }
    std::atomic<bool> stop{false};
    std::thread writer([&] {
      pqxx::connection conn(db_.dsn());
      for (int n = 0; !stop; ++n) {
        pqxx::work tx(conn);
        tx.exec("UPDATE seats SET status = CASE status WHEN 'free' THEN 'held' ELSE 'free' END "
                "WHERE event_id = 1 AND seat = 'S" + std::to_string(1 + n % 10) + "'");
        tx.commit();
        std::this_thread::sleep_for(50ms);
      }
    });
    std::vector<double> dear;  // when a dear recheck was first seen, seconds from start
    double total0 = Sample(Metrics(), kRecheckSeconds);
    double seen = total0;
    auto start = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - start < window) {
      std::string text = Metrics();
      double total = Sample(text, kRecheckSeconds);
      if (total - seen >= 0.15) dear.push_back(testing::SecondsSince(start));
      if (total > seen) seen = total;
      observed.interval_gauge =
          std::max(observed.interval_gauge, Sample(text, "seatwatch_changes_recheck_interval_seconds"));
      std::this_thread::sleep_for(20ms);
    }
    stop = true;
    writer.join();
    observed.recheck_seconds = Sample(Metrics(), kRecheckSeconds) - total0;
    observed.seconds = testing::SecondsSince(start);
    for (std::size_t i = 1; i < dear.size(); ++i) observed.gaps.push_back(dear[i] - dear[i - 1]);
    return observed;
  }
};

TEST_F(RecheckBudgetTest, DearRechecksAreHeldToTheirShareOfEachMinute) {
  Observed observed = Observe("6s", 12s);
  // 12 s at one recheck per 2 s: about 6 runs, 4 or more gaps.
  ASSERT_GE(observed.gaps.size(), 3u);
  for (double gap : observed.gaps) {
    // Each recheck takes 0.2 s and more; at 6 s a minute the next cycle
    // starts 2 s after this one started, never at the 100 ms interval. (A
    // recheck starts after its cycle's drain, which waits for the WAL
    // flush: some tenths of a second of jitter between two.)
    EXPECT_GE(gap, 1.6);
    EXPECT_LE(gap, 3.5);
  }
  EXPECT_GE(observed.interval_gauge, 2.0);
  EXPECT_LE(observed.interval_gauge, 3.0);
  // The session kept busy by rechecks: at most a tenth of the time (and
  // the one cycle at the window's edge).
  EXPECT_GT(observed.recheck_seconds, 0.6);
  EXPECT_LE(observed.recheck_seconds, 0.1 * observed.seconds + 0.5);
}

TEST_F(RecheckBudgetTest, AWholeMinuteHoldsNothingBack) {
  Observed observed = Observe("60s", 6s);
  ASSERT_GE(observed.gaps.size(), 5u);
  std::vector<double> gaps = observed.gaps;
  std::sort(gaps.begin(), gaps.end());
  // Back to back: the 0.2 s recheck, the drain and the interval.
  EXPECT_LT(gaps[gaps.size() / 2], 0.9);
  EXPECT_LT(observed.interval_gauge, 0.5);
  EXPECT_GT(observed.recheck_seconds, 0.25 * observed.seconds);
}

}  // namespace
}  // namespace seatwatch
