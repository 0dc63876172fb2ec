#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "support/scratch_db.h"
#include "support/stall_proxy.h"

namespace seatwatch::testing {

// GET /metrics from the daemon on 127.0.0.1:port: the body, "" while nothing
// answers.
std::string ScrapeMetrics(int port);
// One series of that scrape (see Sample): NaN while absent.
double ScrapeSample(int port, const std::string& series);

// Whether the daemon on `port` answers /readyz with 200 within `timeout`.
bool WaitReady(int port, std::chrono::milliseconds timeout = std::chrono::seconds(20));

// `promtool check metrics` on an exposition text (written to a file in
// `dir`): its exit code, its output in *output.
int PromtoolCheck(const std::string& metrics_text, const std::string& dir, std::string* output);

// The fixture of a suite that runs the built daemon against a database of
// its own: the database (dropped after the test), a fresh folder, a free
// port, and the config the test writes there. The test starts the daemon
// (DaemonProcess) with config_ and Env(); the process stops when it goes out
// of scope.
class DaemonTest : public ::testing::Test {
 protected:
  DaemonTest(const std::string& database, const std::string& dir_prefix,
             ScratchDatabase::Schema schema = ScratchDatabase::Schema::kBooking);

  // The daemon's environment: SEATWATCH_DSN pointing at db_.
  std::vector<std::string> Env() const { return {"SEATWATCH_DSN=" + db_.dsn()}; }
  std::string Metrics() const { return ScrapeMetrics(port_); }
  bool WaitReady(std::chrono::milliseconds timeout = std::chrono::seconds(20)) const {
    return testing::WaitReady(port_, timeout);
  }
  // Writes the shipped example config polling every `poll_interval` on
  // port_ (see WriteShippedConfig) and keeps its path in config_.
  void UseShippedConfig(const std::string& poll_interval = "1s", const std::string& extra = "");

  ScratchDatabase db_;
  std::string dir_;
  int port_;
  std::string config_;
};

// DaemonTest with the database's path through a StallProxy that the test
// stalls and resumes: the config the test writes connects with ProxiedDsn().
class ProxiedDaemonTest : public DaemonTest {
 protected:
  ProxiedDaemonTest(const std::string& database, const std::string& dir_prefix);

  // A DSN for db_ as postgres through proxy_.
  std::string ProxiedDsn() const;

  StallProxy proxy_;
};

}  // namespace seatwatch::testing
