// The built daemon's HTTP server under hostile connections: a scraper that
// connects anew (as a restarted Prometheus does) is still served, promptly,
// while silent, slowloris, idle keep-alive and reconnecting sockets are open.
// Before the server was sized for it (8 workers, 10 s request and 30 s
// keep-alive timeouts), 8 such sockets were enough to time every scrape out.
// The full 200-socket attack is bench/http-attack. And with Basic auth,
// password guessers on 32 connections: the first scrape after a SIGHUP is
// served at once.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <iostream>
#include <thread>
#include <vector>

#include "http/bcrypt.h"
#include "support/daemon_process.h"
#include "support/daemon_test.h"
#include "support/hostile_clients.h"
#include "support/http_client.h"
#include "support/test_env.h"

namespace seatwatch {
namespace {

using namespace std::chrono_literals;
using testing::DaemonProcess;
using testing::HostileClients;
using testing::HttpExchange;
using testing::HttpGet;
using testing::WaitFor;

class HttpAttackTest : public testing::DaemonTest {
 protected:
  HttpAttackTest() : DaemonTest("sw_http_attack", "seatwatch-http-attack") {
    // A config of its own rather than the shipped one: this is about the
    // HTTP server, and one small check keeps /readyz honest.
    testing::WriteFile(dir_ + "/one.sql", "SELECT 1 AS value\n");
    config_ = dir_ + "/seatwatch.toml";
    testing::WriteFile(config_, "[http]\nlisten = \"127.0.0.1:" + std::to_string(port_) +
                                    "\"\n[poll]\ninterval = \"1s\"\n"
                                    "[[metric]]\nname = \"one\"\nhelp = \"one\"\nsql = \"" +
                                    dir_ + "/one.sql\"\nvalue = \"value\"\n");
  }
};

TEST_F(HttpAttackTest, ScrapesSucceedPromptlyWhileFortyHostileSocketsAreOpen) {
  DaemonProcess daemon({"--config", config_}, Env());
  ASSERT_TRUE(WaitReady()) << daemon.Log();

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

// A reload forgot every remembered credential, and bcrypts ran one at a time
// on a mutex that any guesser could take first: with 32 connections guessing
// passwords, the first scrape after a SIGHUP waited 3.5 to 8.3 s for its
// bcrypt (100 connections: up to 19 s, past Prometheus' 10 s scrape
// timeout). Now a credential whose user kept its hash stays remembered, and
// remembered credentials never wait for a bcrypt.
TEST_F(HttpAttackTest, TheFirstScrapeAfterAReloadDoesNotQueueBehindPasswordGuessers) {
  // Cost 10, as `htpasswd -nBC 10` makes them and the README shows.
  std::string hash = http::BcryptHash("s3cret", 10);
  testing::WriteFile(config_, testing::ReadFile(config_) + "[http.basic_auth]\nusers = { prometheus = \"" + hash +
                                  "\" }\n");
  DaemonProcess daemon({"--config", config_}, Env());
  ASSERT_TRUE(WaitReady()) << daemon.Log();
  const std::string scrape =
      "GET /metrics HTTP/1.0\r\nAuthorization: Basic cHJvbWV0aGV1czpzM2NyZXQ=\r\n\r\n";  // prometheus:s3cret
  ASSERT_EQ(HttpExchange(port_, scrape).status, 200);

  HostileClients::Counts counts;
  counts.guesser = 32;
  HostileClients guessers(port_, counts);
  ASSERT_TRUE(WaitFor([&] { return guessers.Guesses() >= 20; }, 20s)) << guessers.Guesses();

  for (int reload = 1; reload <= 3; ++reload) {
    auto reloaded = [&] {
      std::string log = daemon.Log();
      size_t count = 0;
      for (size_t at = log.find("basic auth users reloaded"); at != std::string::npos;
           at = log.find("basic auth users reloaded", at + 1)) {
        ++count;
      }
      return count >= static_cast<size_t>(reload);
    };
    daemon.Signal(SIGHUP);
    ASSERT_TRUE(WaitFor(reloaded, 20s)) << daemon.Log();
    int guesses = guessers.Guesses();
    auto start = std::chrono::steady_clock::now();
    testing::HttpResponse response = HttpExchange(port_, scrape);
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << "first scrape after reload " << reload << ": " << response.status << " in " << elapsed << " s\n";
    EXPECT_EQ(response.status, 200) << "reload " << reload << ": " << response.headers;
    EXPECT_NE(response.body.find("seatwatch_up "), std::string::npos);
    // Prometheus times a scrape out after 10 s by default; a remembered
    // credential costs no bcrypt, so 1 s is generous (as above). Before, on
    // a 2-core machine with bcrypt at cost 10 in about 60 ms: 1.9 to 3.4 s.
    EXPECT_LT(elapsed, 1.0) << "reload " << reload << ", " << guessers.Guesses() - guesses
                            << " guesses answered meanwhile";
    std::this_thread::sleep_for(1s);
  }
  // The guessers were answered all along (401, or 503 when the bcrypt queue
  // was full).
  EXPECT_GT(guessers.Guesses(), 40);
  EXPECT_EQ(daemon.Log().find("http handler failed"), std::string::npos);
  EXPECT_TRUE(daemon.Running());
}

}  // namespace
}  // namespace seatwatch
