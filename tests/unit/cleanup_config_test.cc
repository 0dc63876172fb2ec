// The [cleanup] section: the issue's keys and defaults, strictly read.
#include <gtest/gtest.h>

#include "cleanup/cleanup_worker.h"
#include "config/config_error.h"
#include "config/parse.h"
#include "support/test_config.h"

namespace seatwatch::config {
namespace {

using namespace std::chrono_literals;

constexpr const char* kPath = "/etc/seatwatch/seatwatch.toml";

std::string ErrorOf(const std::string& toml) { return testing::ConfigErrorOf(toml, kPath); }

TEST(CleanupConfigTest, OffByDefaultWithTheDocumentedDefaults) {
  CleanupConfig cleanup = ParseConfig("", kPath).cleanup;
  EXPECT_FALSE(cleanup.enabled);
  EXPECT_EQ(cleanup.interval, 30s);
  EXPECT_EQ(cleanup.batch_size, 500);
  EXPECT_EQ(cleanup.max_batches, 100);
  EXPECT_EQ(cleanup.batch_pause, 50ms);
  EXPECT_EQ(cleanup.lock_timeout, 50ms);
  EXPECT_EQ(cleanup.statement_timeout, 2s);
  EXPECT_FALSE(cleanup.dry_run);
  // A section without `enabled` stays off: cleanup is only ever asked for.
  EXPECT_FALSE(ParseConfig("[cleanup]\nsql = \"c.sql\"\n", kPath).cleanup.enabled);
}

TEST(CleanupConfigTest, EveryKey) {
  CleanupConfig cleanup = ParseConfig(R"(
[cleanup]
enabled = true
sql = "../queries/booking/cleanup_expired_holds.sql"
dry_run_sql = "../queries/booking/cleanup_expired_holds.dry_run.sql"
interval = "1s"
batch_size = 20
max_batches = 5
batch_pause = "0ms"
lock_timeout = "25ms"
statement_timeout = "500ms"
dry_run = true
)",
                                      kPath)
                              .cleanup;
  EXPECT_TRUE(cleanup.enabled);
  EXPECT_EQ(cleanup.sql_path, "/etc/queries/booking/cleanup_expired_holds.sql");
  EXPECT_EQ(cleanup.dry_run_sql_path, "/etc/queries/booking/cleanup_expired_holds.dry_run.sql");
  EXPECT_EQ(cleanup.interval, 1s);
  EXPECT_EQ(cleanup.batch_size, 20);
  EXPECT_EQ(cleanup.max_batches, 5);
  EXPECT_EQ(cleanup.batch_pause, 0ms);
  EXPECT_EQ(cleanup.lock_timeout, 25ms);
  EXPECT_EQ(cleanup.statement_timeout, 500ms);
  EXPECT_TRUE(cleanup.dry_run);
}

TEST(CleanupConfigTest, BadValuesNameFileLineAndKey) {
  EXPECT_NE(ErrorOf("[cleanup]\nenabled = true\n").find("cleanup.sql: is required"),
            std::string::npos);
  EXPECT_NE(ErrorOf("[cleanup]\nenabled = true\nsql = \"c.sql\"\ndry_run = true\n")
                .find("cleanup.dry_run_sql: is required when dry_run = true"),
            std::string::npos);
  EXPECT_NE(ErrorOf("[cleanup]\nbatch_sise = 5\n").find(":2:1: cleanup.batch_sise: unknown key"),
            std::string::npos);
  EXPECT_NE(ErrorOf("[cleanup]\nbatch_size = 0\n").find("cleanup.batch_size: must be between 1"),
            std::string::npos);
  EXPECT_NE(ErrorOf("[cleanup]\nmax_batches = 0\n").find("cleanup.max_batches: must be between 1"),
            std::string::npos);
  EXPECT_NE(ErrorOf("[cleanup]\ninterval = \"10ms\"\n").find("cleanup.interval: must be at least"),
            std::string::npos);
  EXPECT_NE(ErrorOf("[cleanup]\nlock_timeout = \"0ms\"\n").find("cleanup.lock_timeout"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf("[cleanup]\nenabled = \"yes\"\n").find("cleanup.enabled: must be true or false"),
      std::string::npos);
  EXPECT_NE(ErrorOf("[cleanup]\ndry_run = 1\n").find("cleanup.dry_run: must be true or false"),
            std::string::npos);
}

TEST(CleanupConfigTest, SessionWritesUnderItsOwnName) {
  Config config = ParseConfig(R"(
[database]
application_name = "sw-eu"
connect_timeout = "3s"
[cleanup]
lock_timeout = "40ms"
statement_timeout = "1500ms"
)",
                              kPath);
  db::SessionSettings settings = cleanup::CleanupSessionSettings(config);
  EXPECT_EQ(settings.application_name, "sw-eu-cleanup");
  EXPECT_FALSE(settings.read_only);
  EXPECT_EQ(settings.connect_timeout, 3s);
  EXPECT_EQ(settings.lock_timeout, 40ms);
  EXPECT_EQ(settings.statement_timeout, 1500ms);
}

}  // namespace
}  // namespace seatwatch::config
