// Config handling through the built binary: --check-config and the daemon's
// start refuse what the daemon could not use (exit 2, file:line:key), and a
// SIGHUP to a config that would crash, hang or silently drop every check is
// refused while the running checks go on.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>

#include "support/daemon_process.h"
#include "support/daemon_test.h"
#include "support/http_client.h"
#include "support/test_env.h"

namespace seatwatch {
namespace {

using namespace std::chrono_literals;
using testing::DaemonProcess;
using testing::HttpGet;
using testing::Sample;
using testing::WaitFor;

constexpr const char* kOkSeries = "seatwatch_invariant_ok{invariant=\"sold_seat_without_ticket\"}";

class ConfigDaemonTest : public testing::DaemonTest {
 protected:
  ConfigDaemonTest() : DaemonTest("sw_config", "seatwatch-config-daemon") { UseShippedConfig(); }

  // Runs the binary to its end; returns the exit code, the output in *log.
  int Run(const std::vector<std::string>& args, std::string* log,
          const std::vector<std::string>& env = {}) {
    DaemonProcess process(args, env.empty() ? Env() : env);
    bool ended = process.WaitExit(20s);
    *log = process.Log();
    EXPECT_TRUE(ended) << "seatwatch " << args.back() << " did not end within 20s:\n" << *log;
    return process.Stop();
  }

  // Starts the daemon on the shipped config and waits for a clean poll.
  std::unique_ptr<DaemonProcess> StartDaemon() {
    auto daemon = std::make_unique<DaemonProcess>(std::vector<std::string>{"--config", config_}, Env());
    EXPECT_TRUE(WaitReady()) << daemon->Log();
    EXPECT_TRUE(WaitFor([&] { return Sample(Metrics(), kOkSeries) == 1; }, 10s)) << daemon->Log();
    return daemon;
  }

  // After a refused reload: still running, still polling every check.
  void ExpectChecksKept(DaemonProcess& daemon) {
    EXPECT_TRUE(daemon.Running()) << daemon.Log();
    double before = Sample(Metrics(), "seatwatch_last_poll_timestamp_seconds");
    EXPECT_TRUE(WaitFor([&] { return Sample(Metrics(), "seatwatch_last_poll_timestamp_seconds") > before; }, 10s))
        << daemon.Log();
    std::string text = Metrics();
    EXPECT_EQ(Sample(text, kOkSeries), 1) << text;
    EXPECT_EQ(Sample(text, "seatwatch_check_success{check=\"booking_reconciliation\"}"), 1) << text;
    EXPECT_EQ(HttpGet(port_, "/readyz").status, 200);
  }
};

TEST_F(ConfigDaemonTest, CheckConfigAndStartRefuseADsnTheDaemonCannotUse) {
  struct Case {
    std::string toml;
    std::string expected;  // after the file name
  };
  const std::vector<Case> cases = {
      {"[database]\ndsn = \"host='unterminated\"\n", ":2:7: database.dsn: cannot parse database DSN"},
      {"[database]\nconnect_timeout = \"2147483648s\"\n", ":2:19: database.connect_timeout: must be at least 2s and at most 1h"},
      {"[database]\napplication_name = \"sw\\u0000x\"\n",
       ":2:20: database.application_name: must not contain control characters"},
      {"[database]\nstatement_timeout = \"2147483647h\"\n", ":2:21: database.statement_timeout: duration"},
  };
  for (const auto& bad : cases) {
    std::string path = dir_ + "/bad.toml";
    testing::WriteFile(path, bad.toml +
                                 "[[metric]]\nname = \"m\"\nsql = \"" + testing::SourceDir() +
                                 "/queries/booking/reconciliation.sql\"\nvalue = \"count\"\n");
    std::string log;
    // No SEATWATCH_DSN: the file's own DSN is the one used.
    EXPECT_EQ(Run({"--config", path, "--check-config"}, &log, {"SEATWATCH_UNUSED=1"}), 2) << log;
    EXPECT_NE(log.find(path + bad.expected), std::string::npos) << log;
    EXPECT_EQ(Run({"--config", path}, &log, {"SEATWATCH_UNUSED=1"}), 2) << log;
    EXPECT_NE(log.find(path + bad.expected), std::string::npos) << log;
  }

  // The same DSN from the environment is named by its source.
  std::string log;
  EXPECT_EQ(Run({"--config", config_, "--check-config"}, &log, {"SEATWATCH_DSN=host='unterminated"}), 2) << log;
  EXPECT_NE(log.find("SEATWATCH_DSN: database.dsn: cannot parse database DSN"), std::string::npos) << log;
  EXPECT_EQ(Run({"--config", config_}, &log, {"SEATWATCH_DSN=host='unterminated"}), 2) << log;
  EXPECT_NE(log.find("SEATWATCH_DSN: database.dsn: cannot parse database DSN"), std::string::npos) << log;

  // A good config against the scratch database still passes.
  EXPECT_EQ(Run({"--config", config_, "--check-config"}, &log), 0) << log;
}

TEST_F(ConfigDaemonTest, CheckConfigAndStartRefuseAFifoAtOnce) {
  std::string fifo = dir_ + "/q.sql";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::string path = dir_ + "/fifo.toml";
  testing::WriteFile(path, "[[invariant]]\nname = \"x\"\nsql = \"q.sql\"\nvalue = \"v\"\n");
  std::string log;
  EXPECT_EQ(Run({"--config", path, "--check-config"}, &log), 2) << log;
  EXPECT_NE(log.find(path + ":3:7: invariant.sql: cannot read " + fifo + ": not a regular file (a FIFO)"),
            std::string::npos)
      << log;
  EXPECT_EQ(Run({"--config", path}, &log), 2) << log;
  EXPECT_NE(log.find("not a regular file (a FIFO)"), std::string::npos) << log;
  EXPECT_EQ(Run({"--config", fifo, "--check-config"}, &log), 2) << log;
  EXPECT_NE(log.find(fifo + ": cannot read config file: not a regular file (a FIFO)"), std::string::npos) << log;
}

TEST_F(ConfigDaemonTest, ReloadToAHugeNameIsRefusedAndTheDaemonLives) {
  auto daemon = StartDaemon();
  std::string good = testing::ReadFile(config_);
  testing::WriteFile(config_, good + "\n[[metric]]\nname = \"" + std::string(60000, 'a') +
                                  "\"\nsql = \"x.sql\"\nvalue = \"v\"\n");
  daemon->Signal(SIGHUP);
  ASSERT_TRUE(WaitFor([&] { return daemon->Log().find("reload failed") != std::string::npos; }, 10s))
      << daemon->Log().substr(0, 2000);
  EXPECT_NE(daemon->Log().find("metric.name: is 60000 characters long; at most 128"), std::string::npos)
      << daemon->Log().substr(0, 2000);
  ExpectChecksKept(*daemon);

  // A listen address of the same size, too.
  std::string listen = "listen = \"127.0.0.1:" + std::to_string(port_) + "\"";
  std::string huge_listen = good;
  ASSERT_NE(huge_listen.find(listen), std::string::npos);
  huge_listen.replace(huge_listen.find(listen), listen.size(), "listen = \"" + std::string(60000, 'h') + ":1\"");
  testing::WriteFile(config_, huge_listen);
  daemon->Signal(SIGHUP);
  ASSERT_TRUE(WaitFor([&] { return daemon->Log().find("http.listen: is 60002 characters long") != std::string::npos; },
                      10s))
      << daemon->Log().substr(0, 2000);
  ExpectChecksKept(*daemon);
  EXPECT_EQ(daemon->Stop(), 0);
}

TEST_F(ConfigDaemonTest, ReloadToAnEmptyFileKeepsTheChecks) {
  auto daemon = StartDaemon();
  std::string good = testing::ReadFile(config_);
  testing::WriteFile(config_, "");
  daemon->Signal(SIGHUP);
  ASSERT_TRUE(WaitFor([&] { return daemon->Log().find("configures no checks") != std::string::npos; }, 10s))
      << daemon->Log();
  EXPECT_NE(daemon->Log().find("reload failed; keeping the running configuration"), std::string::npos)
      << daemon->Log();
  EXPECT_NE(daemon->Log().find(config_ + ": configures no checks"), std::string::npos) << daemon->Log();
  ExpectChecksKept(*daemon);

  // Saying so explicitly is obeyed: the invariant series go away.
  testing::WriteFile(config_, "allow_no_checks = true\n[locks]\nenabled = false\n[http]\nlisten = \"127.0.0.1:" +
                                  std::to_string(port_) + "\"\n");
  daemon->Signal(SIGHUP);
  EXPECT_TRUE(WaitFor([&] { return std::isnan(Sample(Metrics(), kOkSeries)); }, 10s)) << daemon->Log();
  EXPECT_TRUE(daemon->Running());
  EXPECT_EQ(daemon->Stop(), 0);
}

// The config file replaced by a FIFO: the reload used to block in open()
// forever, and SIGTERM (taken by the same thread) was then ignored.
TEST_F(ConfigDaemonTest, ReloadToAFifoDoesNotHangAndSigtermStillStops) {
  auto daemon = StartDaemon();
  ASSERT_EQ(unlink(config_.c_str()), 0);
  ASSERT_EQ(mkfifo(config_.c_str(), 0600), 0);
  daemon->Signal(SIGHUP);
  ASSERT_TRUE(WaitFor([&] { return daemon->Log().find("not a regular file (a FIFO)") != std::string::npos; }, 10s))
      << daemon->Log();
  ExpectChecksKept(*daemon);
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(daemon->Stop(), 0) << daemon->Log();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
}

}  // namespace
}  // namespace seatwatch
