// The [cleanup] section: the issue's keys and defaults, strictly read.
#include <gtest/gtest.h>

#include <tuple>

#include "cleanup/cleanup_worker.h"
#include "config/config_error.h"
#include "config/parse.h"
#include "unit/config_text.h"

namespace seatwatch::config {
namespace {

// The tunables of a [cleanup] table as one tuple: a mismatch prints both.
auto Tunables(const CleanupConfig& c) {
  return std::make_tuple(c.interval, c.batch_size, c.max_batches, c.batch_pause, c.lock_timeout,
                         c.statement_timeout);
}

TEST(CleanupConfigTest, OffByDefaultWithTheDocumentedDefaults) {
  CleanupConfig cleanup = ParseText("").cleanup;
  EXPECT_FALSE(cleanup.enabled);
  EXPECT_EQ(Tunables(cleanup), std::make_tuple(30s, 500, 100, 50ms, 50ms, 2s));
  EXPECT_FALSE(cleanup.dry_run);
  // A section without `enabled` stays off: cleanup is only ever asked for.
  EXPECT_FALSE(ParseText("[cleanup]\nsql = \"c.sql\"\n").cleanup.enabled);
}

TEST(CleanupConfigTest, EveryKey) {
  CleanupConfig cleanup = ParseText(R"(
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
)")
                              .cleanup;
  EXPECT_TRUE(cleanup.enabled);
  EXPECT_EQ(cleanup.sql_path, "/etc/queries/booking/cleanup_expired_holds.sql");
  EXPECT_EQ(cleanup.dry_run_sql_path, "/etc/queries/booking/cleanup_expired_holds.dry_run.sql");
  EXPECT_EQ(Tunables(cleanup), std::make_tuple(1s, 20, 5, 0ms, 25ms, 500ms));
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
  Config config = ParseText(R"(
[database]
application_name = "sw-eu"
connect_timeout = "3s"
[cleanup]
lock_timeout = "40ms"
statement_timeout = "1500ms"
)");
  db::SessionSettings settings = cleanup::CleanupSessionSettings(config);
  EXPECT_EQ(settings.application_name, "sw-eu-cleanup");
  EXPECT_FALSE(settings.read_only);
  EXPECT_EQ(settings.connect_timeout, 3s);
  EXPECT_EQ(settings.lock_timeout, 40ms);
  EXPECT_EQ(settings.statement_timeout, 1500ms);
}

}  // namespace
}  // namespace seatwatch::config
