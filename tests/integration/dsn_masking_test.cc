// The built daemon never prints a DSN's password: not in its log, not in
// /api/invariants, not in --once or --check-config output. Two DSNs that
// leaked before: a URI parameter spelt %70assword (libpq decodes it to
// password), and a URI password with an unencoded '/' (libpq then reads its
// first part as the port and quotes it in its error).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/daemon_process.h"
#include "support/daemon_test.h"
#include "support/http_client.h"
#include "support/test_env.h"

namespace seatwatch {
namespace {

using namespace std::chrono_literals;
using testing::DaemonProcess;
using testing::HttpGet;
using testing::WaitFor;

std::string Trim(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

class DsnMaskingTest : public testing::DaemonTest {
 protected:
  DsnMaskingTest() : DaemonTest("sw_dsn_mask", "seatwatch-dsn") {
    UseShippedConfig();
    socket_dir_ = testing::ScratchPgDir() + "/sock";
    pg_port_ = Trim(testing::ReadFile(testing::ScratchPgDir() + "/port"));
  }

  // The output of one run of the binary with `args` that ends by itself.
  std::string RunToEnd(const std::vector<std::string>& args, const std::string& dsn) {
    DaemonProcess process(args, {"SEATWATCH_DSN=" + dsn});
    EXPECT_TRUE(process.WaitExit(60s)) << process.Log();
    process.Stop();
    return process.Log();
  }

  static void ExpectNoSecret(const std::string& text, const std::vector<std::string>& secrets,
                             const std::string& where) {
    for (const auto& secret : secrets) {
      EXPECT_EQ(text.find(secret), std::string::npos) << where << " shows " << secret << ":\n" << text;
    }
  }

  std::string socket_dir_;
  std::string pg_port_;
};

// libpq decodes %70assword to password: the daemon connects with it, and the
// masking must see it the same way.
TEST_F(DsnMaskingTest, PercentEncodedPasswordKeyIsMaskedEverywhere) {
  const std::vector<std::string> secrets = {"TopSecret_zzz"};
  std::string dsn = "postgresql:///sw_dsn_mask?host=" + socket_dir_ + "&port=" + pg_port_ +
                    "&user=postgres&%70assword=TopSecret_zzz";
  {
    DaemonProcess daemon({"--config", config_}, {"SEATWATCH_DSN=" + dsn});
    ASSERT_TRUE(WaitReady())
        << daemon.Log();
    ExpectNoSecret(HttpGet(port_, "/api/invariants").body, secrets, "/api/invariants");
    ExpectNoSecret(Metrics(), secrets, "/metrics");
    EXPECT_EQ(daemon.Stop(), 0);
    std::string log = daemon.Log();
    EXPECT_NE(log.find("connected to database"), std::string::npos) << log;
    EXPECT_NE(log.find("password=****"), std::string::npos) << log;
    ExpectNoSecret(log, secrets, "the log");
  }
  std::string once = RunToEnd({"--config", config_, "--once"}, dsn);
  EXPECT_NE(once.find("dbname=sw_dsn_mask"), std::string::npos) << once;
  ExpectNoSecret(once, secrets, "--once");
  // Unreachable, so that --check-config prints the DSN and libpq's error.
  std::string unreachable =
      "postgresql:///sw_dsn_mask?host=/nonexistent-seatwatch&%70assword=TopSecret_zzz";
  std::string check = RunToEnd({"--config", config_, "--check-config"}, unreachable);
  EXPECT_NE(check.find("nonexistent-seatwatch"), std::string::npos) << check;
  ExpectNoSecret(check, secrets, "--check-config");
  std::string once_down = RunToEnd({"--config", config_, "--once"}, unreachable);
  ExpectNoSecret(once_down, secrets, "--once (unreachable)");
}

// postgresql://user:TopSecret/zzz_more@host/db: libpq takes "user" for the
// host, "TopSecret" for the port and "zzz_more@host/db" for the database, and
// says: invalid integer value "TopSecret" for connection option "port".
TEST_F(DsnMaskingTest, UnencodedSlashInUriPasswordIsMaskedEverywhere) {
  const std::vector<std::string> secrets = {"TopSecret", "zzz_more"};
  std::string dsn = "postgresql://postgres:TopSecret/zzz_more@localhost:" + pg_port_ + "/sw_dsn_mask";
  {
    DaemonProcess daemon({"--config", config_}, {"SEATWATCH_DSN=" + dsn});
    std::string api;
    ASSERT_TRUE(WaitFor([&] {
      api = HttpGet(port_, "/api/invariants").body;
      return api.find("port") != std::string::npos;
    }, 20s)) << api << daemon.Log();
    ExpectNoSecret(api, secrets, "/api/invariants");
    ExpectNoSecret(Metrics(), secrets, "/metrics");
    daemon.Stop();
    std::string log = daemon.Log();
    EXPECT_NE(log.find("cannot connect to database"), std::string::npos) << log;
    EXPECT_NE(log.find("localhost"), std::string::npos) << log;
    ExpectNoSecret(log, secrets, "the log");
  }
  std::string once = RunToEnd({"--config", config_, "--once"}, dsn);
  EXPECT_NE(once.find("sw_dsn_mask"), std::string::npos) << once;
  ExpectNoSecret(once, secrets, "--once");
  std::string check = RunToEnd({"--config", config_, "--check-config"}, dsn);
  ExpectNoSecret(check, secrets, "--check-config");
}

}  // namespace
}  // namespace seatwatch
