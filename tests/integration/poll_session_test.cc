// A session the server closes while it is idle between polls must not show
// as a failed poll: with a role's idle_session_timeout shorter than the poll
// interval the monitor's session is not closed at all (it turns the timeout
// off for itself), and after pg_terminate_backend the next poll reconnects
// at once and runs, so seatwatch_up and every invariant series stay.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <set>
#include <string>
#include <thread>

#include "checks/registry.h"
#include "metrics/snapshot.h"
#include "poll/poller.h"
#include "support/daemon_process.h"
#include "support/scratch_db.h"
#include "support/test_config.h"
#include "support/test_env.h"

namespace seatwatch {
namespace {

using namespace std::chrono_literals;
using testing::Sample;
using testing::ScratchDatabase;

constexpr const char* kRole = "sw_idle_monitor";
constexpr const char* kOk = "seatwatch_invariant_ok{invariant=\"always_violated\"}";

class PollSessionTest : public ::testing::Test {
 protected:
  PollSessionTest() : db_("sw_poll_session") {
    db_.Exec(std::string("DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '") +
             kRole + "') THEN CREATE ROLE " + kRole + " LOGIN; END IF; END $$");
    db_.Exec(std::string("ALTER ROLE ") + kRole + " RESET ALL");
    dir_ = testing::MakeTempDir("seatwatch-sql");
    testing::WriteFile(dir_ + "/violated.sql", "SELECT 1 AS violations");
  }
  ~PollSessionTest() override {
    try {
      db_.Exec(std::string("ALTER ROLE ") + kRole + " RESET ALL");
    } catch (...) {
    }
  }

  config::Config Config() {
    return testing::ConfigFromToml(
        "[database]\napplication_name = \"sw_idle\"\nreconnect_max_backoff = \"10s\"\n"
        "[poll]\ninterval = \"2s\"\n[locks]\nenabled = false\n[holds]\nenabled = false\n"
        "[[invariant]]\nname = \"always_violated\"\nsql = \"" + dir_ +
            "/violated.sql\"\nvalue = \"violations\"\n",
        db_.dsn() + " user=" + kRole);
  }

  std::set<std::string> Backends() {
    std::string pids = db_.Scalar(
        "SELECT coalesce(string_agg(pid::text, ','), '') FROM pg_stat_activity "
        "WHERE application_name = 'sw_idle'");
    return pids.empty() ? std::set<std::string>{} : std::set<std::string>{pids};
  }

  // Runs the poller for `seconds`, calling `during` once after the first
  // poll, and counts the scrapes (every 100 ms) that saw up 0 or no verdict.
  int BadScrapes(double seconds, const std::function<void()>& during, std::set<std::string>* backends) {
    config::Config config = Config();
    metrics::SnapshotStore store;
    poll::Poller poller(config, checks::BuildChecks(config), store, "test");
    std::thread running([&] { poller.Run(); });
    bool first = testing::WaitFor([&] {
      return Sample(store.Current()->MetricsText(), kOk) == 0;
    }, 10s);
    EXPECT_TRUE(first) << store.Current()->MetricsText();
    if (backends) *backends = Backends();
    during();
    int bad = 0;
    auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < end) {
      std::string text = store.Current()->MetricsText();
      if (Sample(text, "seatwatch_up") != 1 || Sample(text, kOk) != 0) ++bad;
      if (backends) {
        for (const auto& pid : Backends()) backends->insert(pid);
      }
      std::this_thread::sleep_for(100ms);
    }
    poller.Stop();
    running.join();
    return bad;
  }

  ScratchDatabase db_;
  std::string dir_;
};

// idle_session_timeout (1 s) shorter than the poll interval (2 s): before,
// every poll found its session closed, failed, and the next one reconnected.
TEST_F(PollSessionTest, RoleIdleSessionTimeoutDoesNotCloseTheSession) {
  db_.Exec(std::string("ALTER ROLE ") + kRole + " SET idle_session_timeout = '1s'");
  std::set<std::string> backends;
  int bad = BadScrapes(7, [] {}, &backends);
  EXPECT_EQ(bad, 0) << "scrapes with seatwatch_up 0 or without the verdict";
  EXPECT_EQ(backends.size(), 1u) << "the session was closed and reopened";
}

// pg_terminate_backend of the idle session: the next poll reconnects at
// once instead of failing, so no scrape sees the lane down.
TEST_F(PollSessionTest, TerminatedIdleSessionReconnectsAtOnce) {
  std::set<std::string> backends;
  int bad = BadScrapes(5, [&] {
    db_.Exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'sw_idle'");
  }, &backends);
  EXPECT_EQ(bad, 0) << "scrapes with seatwatch_up 0 or without the verdict";
  EXPECT_EQ(backends.size(), 2u) << "expected one reconnect";
}

}  // namespace
}  // namespace seatwatch
