#include "support/daemon_test.h"

#include "support/daemon_process.h"
#include "support/http_client.h"
#include "support/test_config.h"
#include "support/test_env.h"

namespace seatwatch::testing {

std::string ScrapeMetrics(int port) { return HttpGet(port, "/metrics").body; }

double ScrapeSample(int port, const std::string& series) {
  return Sample(ScrapeMetrics(port), series);
}

bool WaitReady(int port, std::chrono::milliseconds timeout) {
  return WaitFor([&] { return HttpGet(port, "/readyz").status == 200; }, timeout);
}

int PromtoolCheck(const std::string& metrics_text, const std::string& dir, std::string* output) {
  std::string path = dir + "/metrics.txt";
  WriteFile(path, metrics_text);
  return RunCommand("promtool check metrics < " + path, output);
}

DaemonTest::DaemonTest(const std::string& database, const std::string& dir_prefix,
                       ScratchDatabase::Schema schema)
    : db_(database, schema), dir_(MakeTempDir(dir_prefix)), port_(FreePort()) {}

ProxiedDaemonTest::ProxiedDaemonTest(const std::string& database, const std::string& dir_prefix)
    : DaemonTest(database, dir_prefix), proxy_(ScratchTcpPort()) {}

std::string ProxiedDaemonTest::ProxiedDsn() const {
  return "host=127.0.0.1 port=" + std::to_string(proxy_.port()) + " user=postgres dbname=" +
         db_.name();
}

void DaemonTest::UseShippedConfig(const std::string& poll_interval, const std::string& extra) {
  config_ = WriteShippedConfig(dir_, poll_interval, port_, extra);
}

}  // namespace seatwatch::testing
