// The built daemon's HTTP server under hostile connections: a scraper that
// connects anew (as a restarted Prometheus does) is still served, promptly,
// while silent, slowloris, idle keep-alive and reconnecting sockets are open.
// Before the server was sized for it (8 workers, 10 s request and 30 s
// keep-alive timeouts), 8 such sockets were enough to time every scrape out.
// The full 200-socket attack is bench/http-attack.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "support/daemon_process.h"
#include "support/hostile_clients.h"
#include "support/http_client.h"
#include "support/scratch_db.h"
#include "support/test_env.h"

namespace seatwatch {
namespace {

using namespace std::chrono_literals;
using testing::DaemonProcess;
using testing::HostileClients;
using testing::HttpGet;
using testing::ScratchDatabase;
using testing::WaitFor;

class HttpAttackTest : public ::testing::Test {
 protected:
  HttpAttackTest()
      : db_("sw_http_attack"), dir_(testing::MakeTempDir("seatwatch-http-attack")),
        port_(testing::FreePort()) {
    // A config of its own rather than the shipped one: this is about the
    // HTTP server, and one small check keeps /readyz honest.
    testing::WriteFile(dir_ + "/one.sql", "SELECT 1 AS value\n");
    config_ = dir_ + "/seatwatch.toml";
    testing::WriteFile(config_, "[http]\nlisten = \"127.0.0.1:" + std::to_string(port_) +
                                    "\"\n[poll]\ninterval = \"1s\"\n"
                                    "[[metric]]\nname = \"one\"\nhelp = \"one\"\nsql = \"" +
                                    dir_ + "/one.sql\"\nvalue = \"value\"\n");
  }

  std::vector<std::string> Env() { return {"SEATWATCH_DSN=" + db_.dsn()}; }

  ScratchDatabase db_;
  std::string dir_;
  int port_;
  std::string config_;
};

TEST_F(HttpAttackTest, ScrapesSucceedPromptlyWhileFortyHostileSocketsAreOpen) {
  DaemonProcess daemon({"--config", config_}, Env());
  ASSERT_TRUE(WaitFor([&] { return HttpGet(port_, "/readyz").status == 200; }, 20s)) << daemon.Log();

  HostileClients::Counts counts;
  counts.silent = counts.slowloris = counts.idler = counts.reconnect = 10;
  HostileClients hostile(port_, counts);
  ASSERT_TRUE(WaitFor([&] { return hostile.Connected() >= 40; }, 10s)) << hostile.Connected();
  // Let the first round of timeouts pass, so reconnecting sockets are
  // cycling while the scrapes run.
  std::this_thread::sleep_for(3s);

  // 20 scrapes on a new connection each, a quarter second apart. Before the
  // fix each one waited for HttpGet's 10 s timeout; give up after 3 failures
  // so a regression fails in seconds, not minutes.
  std::vector<double> seconds;
  int failures = 0;
  for (int i = 0; i < 20 && failures < 3; ++i) {
    auto start = std::chrono::steady_clock::now();
    auto response = HttpGet(port_, "/metrics");
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    seconds.push_back(elapsed);
    bool ok = response.status == 200 &&
              response.body.find("seatwatch_up ") != std::string::npos;
    if (!ok) ++failures;
    std::this_thread::sleep_for(250ms);
  }
  std::sort(seconds.begin(), seconds.end());
  // p99 of 20 samples is the slowest one. 1 s is generous for a loopback
  // scrape on a loaded 2-core machine, and far below the 10 s a starved
  // scraper waits.
  double p99 = seconds.back();
  EXPECT_EQ(failures, 0) << "of " << seconds.size() << " scrapes; slowest " << p99 << " s";
  EXPECT_EQ(seconds.size(), 20u);
  EXPECT_LT(p99, 1.0) << "median " << seconds[seconds.size() / 2] << " s";
  // The hostile sockets were really there and were cut by the server's
  // timeouts (silent, slowloris and reconnecting ones after the request
  // timeout), not served forever.
  EXPECT_GT(hostile.ClosedByServer(), 10);
  EXPECT_TRUE(daemon.Running());
}

}  // namespace
}  // namespace seatwatch
