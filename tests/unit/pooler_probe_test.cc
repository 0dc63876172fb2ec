#include "db/pooler_probe.h"

#include <gtest/gtest.h>

#include "db/local_settings.h"

namespace seatwatch::db {
namespace {

using std::chrono::milliseconds;

SessionSettings Monitor() {
  SessionSettings settings;
  settings.statement_timeout = milliseconds(5000);
  settings.lock_timeout = milliseconds(100);
  settings.read_only = true;
  return settings;
}

SessionFacts Applied(int pid) { return {pid, milliseconds(5000), milliseconds(100), true}; }

TEST(PoolerProbeTest, ADirectSessionIsNotPooled) {
  PoolerVerdict verdict = JudgePooler(Monitor(), 4242, Applied(4242));
  EXPECT_FALSE(verdict.pooled);
  EXPECT_FALSE(verdict.options_dropped);
  EXPECT_EQ(verdict.reason, "");
}

// PgBouncer makes up the pid (and cancel key) it gives its clients.
TEST(PoolerProbeTest, AnotherBackendPidIsAPooler) {
  PoolerVerdict verdict = JudgePooler(Monitor(), -1024662666, Applied(12489));
  EXPECT_TRUE(verdict.pooled);
  EXPECT_FALSE(verdict.options_dropped);
  EXPECT_EQ(verdict.reason,
            "the backend pid given at connect (-1024662666) is not the server's (12489)");
}

// ignore_startup_parameters = options: the role's defaults stand instead.
TEST(PoolerProbeTest, DroppedOptionsAreNamedWithWhatStandsInstead) {
  SessionFacts facts{12489, milliseconds(60000), milliseconds(5000), false};
  PoolerVerdict verdict = JudgePooler(Monitor(), 7, facts);
  EXPECT_TRUE(verdict.pooled);
  EXPECT_TRUE(verdict.options_dropped);
  EXPECT_EQ(verdict.reason,
            "the backend pid given at connect (7) is not the server's (12489); the connection "
            "options were not applied: statement_timeout 60000ms (not 5000ms), lock_timeout "
            "5000ms (not 100ms), default_transaction_read_only off (not on)");
}

// The cleanup's writable session asks for no read-only default.
TEST(PoolerProbeTest, AWritableSessionIgnoresTheReadOnlyDefault) {
  SessionSettings cleanup = Monitor();
  cleanup.read_only = false;
  SessionFacts facts = Applied(9);
  facts.read_only = false;
  EXPECT_FALSE(JudgePooler(cleanup, 9, facts).pooled);
}

TEST(PoolerProbeTest, TheRefusedOptionsParameterGetsItsFix) {
  auto hint = OptionsRefusedHint(
      "connection to server at \"127.0.0.1\", port 6432 failed: FATAL:  unsupported startup "
      "parameter: options\n");
  ASSERT_TRUE(hint.has_value());
  EXPECT_NE(hint->find("set ignore_startup_parameters = options in pgbouncer.ini"),
            std::string::npos);
  EXPECT_FALSE(OptionsRefusedHint("FATAL:  password authentication failed").has_value());
}

// One round trip: the statements in one simple query.
TEST(LocalSettingsTest, EveryTimeoutInOneString) {
  EXPECT_EQ(SetLocalSql({milliseconds(1000), milliseconds(100)}),
            "SET LOCAL statement_timeout = 1000; SET LOCAL lock_timeout = 100; "
            "SET LOCAL jit = off; SET LOCAL extra_float_digits = 1");
}

}  // namespace
}  // namespace seatwatch::db
