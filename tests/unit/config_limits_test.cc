// Values that used to crash the parser (huge names: std::regex recursion),
// overflow it, or pass validation and then fail against PostgreSQL or libpq.
// Each bad value is an error naming file, line and key; each good neighbour
// is accepted, so the limits are where the README says they are.
#include <gtest/gtest.h>

#include <string>

#include "config/config_error.h"
#include "config/parse.h"
#include "unit/config_text.h"

namespace seatwatch::config {
namespace {

std::string Entry(const std::string& name, const std::string& extra = "") {
  return "[[invariant]]\nname = \"" + name + "\"\nsql = \"a.sql\"\nvalue = \"v\"\n" + extra;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// 60,000 characters overflowed the stack of std::regex_match; now the length
// is refused before the characters are looked at, and the value is not echoed.
TEST(ConfigLimitsTest, HugeNamesAreRefusedWithoutCrashing) {
  const std::string huge(60000, 'a');
  std::string error = ErrorOf(Entry(huge));
  EXPECT_TRUE(Contains(error, "seatwatch.toml:2:8: invariant.name: is 60000 characters long; at most 128"))
      << error.substr(0, 300);
  EXPECT_LT(error.size(), 300u);

  // Each value in its key: the rest of the file is good.
  const std::pair<std::string, const char*> kHuge[] = {
      {Entry("x", "labels = [\"" + huge + "\"]\n"),
       "seatwatch.toml:5:10: invariant.labels: a label is 60000 characters long; at most 63"},
      {"[http]\nlisten = \"" + huge + ":9646\"\n",
       "seatwatch.toml:2:10: http.listen: is 60005 characters long; at most 259"},
      {Entry("x", "invariant_column = \"i\"\ninvariants = [\"" + huge + "\"]\n"),
       "invariant.invariants: an invariant name is 60000 characters long; at most 128"},
      {"[locks]\nresolve_rows = [\"" + huge + "\"]\n",
       "locks.resolve_rows: a table name is 60000 characters long; at most 127"},
      {"[[metric]]\nname = \"" + huge + "\"\nsql = \"a.sql\"\nvalue = \"v\"\n",
       "metric.name: is 60000 characters long; at most 128"},
  };
  for (const auto& [toml, expected] : kHuge) {
    error = ErrorOf(toml);
    EXPECT_TRUE(Contains(error, expected)) << error.substr(0, 300);
  }
}

TEST(ConfigLimitsTest, NamesAtTheLimitAreAccepted) {
  const std::string name(128, 'n');
  const std::string label(63, 'l');
  Config config = ParseText(Entry(name, "labels = [\"" + label + "\"]\n") +
                                  "[http]\nlisten = \"" + std::string(253, 'h') + ":9646\"\n");
  ASSERT_EQ(config.queries.size(), 1u);
  EXPECT_EQ(config.queries[0].name, name);
  EXPECT_EQ(config.queries[0].labels[0], label);
  EXPECT_TRUE(Contains(ErrorOf(Entry(name + "n")), "invariant.name: is 129 characters long; at most 128"));
  EXPECT_TRUE(Contains(ErrorOf(Entry("x", "labels = [\"" + label + "l\"]\n")),
                       "a label is 64 characters long; at most 63"));
}

TEST(ConfigLimitsTest, ListenIsCheckedByHand) {
  for (const char* good : {"127.0.0.1:9646", "0.0.0.0:1", "host_name-1.example:65535", "localhost:9646", ":9646"}) {
    EXPECT_EQ(ErrorOf(std::string("[http]\nlisten = \"") + good + "\"\n"), "(no error)") << good;
  }
  for (const char* bad : {"nope", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:0", "127.0.0.1:123456",
                          "[::1:9646", "[]:9646", "a b:9646", "host:96x6", "[::1]x:9646",
                          "host:+9646"}) {
    EXPECT_TRUE(Contains(ErrorOf(std::string("[http]\nlisten = \"") + bad + "\"\n"),
                         "seatwatch.toml:2:10: http.listen: must be HOST:PORT"))
        << bad;
  }
}

TEST(ConfigLimitsTest, ControlCharactersInNamesAreRefused) {
  std::string error = ErrorOf(Entry("x", "labels = [\"event\\u0001id\"]\n"));
  EXPECT_TRUE(Contains(error, "invariant.labels: \"event\\x01id\" is not a valid Prometheus label name")) << error;
  error = ErrorOf(Entry("x", "labels = [\"event\\nid\"]\n"));
  EXPECT_TRUE(Contains(error, "invariant.labels: \"event\\x0aid\" is not a valid Prometheus label name")) << error;
  error = ErrorOf(Entry("a\\u0000b"));
  EXPECT_TRUE(Contains(error, "invariant.name: \"a\\x00b\" must match [a-z_][a-z0-9_]*")) << error;
  error = ErrorOf("[[invariant]]\nname = \"x\"\nsql = \"a.sql\"\nvalue = \"v\\u0007\"\n");
  EXPECT_TRUE(Contains(error, "seatwatch.toml:4:9: invariant.value: must not contain control characters"))
      << error;
}

// HELP text may span lines (the exposition writer escapes line breaks); other
// control characters are refused, so nothing raw reaches a scrape or a terminal.
TEST(ConfigLimitsTest, HelpMayHaveLineBreaksButNoOtherControlCharacters) {
  Config config = ParseText(Entry("x", "help = \"\"\"first line\nsecond\tline\"\"\"\n"));
  EXPECT_EQ(config.queries[0].help, "first line\nsecond\tline");
  std::string error = ErrorOf(Entry("x", "help = \"bell\\u0007\"\n"));
  EXPECT_TRUE(Contains(error, "seatwatch.toml:5:8: invariant.help: must not contain control characters "
                              "other than line breaks and tabs"))
      << error;
  error = ErrorOf(Entry("x", "help = \"cr\\r\\nlf\"\n"));
  EXPECT_TRUE(Contains(error, "invariant.help: must not contain control characters")) << error;
  error = ErrorOf(Entry("x", "help = \"" + std::string(5000, 'h') + "\"\n"));
  EXPECT_TRUE(Contains(error, "invariant.help: is 5000 characters long; at most 4096")) << error;
}

struct RangeCase {
  const char* toml;
  const char* expected;  // "(no error)" for a value at the edge of its range
};

class ConfigRangeTest : public ::testing::TestWithParam<RangeCase> {};

TEST_P(ConfigRangeTest, DurationsStayInWhatPostgresAndLibpqAccept) {
  std::string error = ErrorOf(GetParam().toml);
  EXPECT_TRUE(Contains(error, GetParam().expected)) << "got: " << error << "\nwanted: " << GetParam().expected;
}

INSTANTIATE_TEST_SUITE_P(
    Ranges, ConfigRangeTest,
    ::testing::Values(
        // PostgreSQL's statement_timeout and lock_timeout are int milliseconds;
        // 0 disables them, which a monitor must never do.
        RangeCase{"[database]\nstatement_timeout = \"2147483647h\"\n",
                  "seatwatch.toml:2:21: database.statement_timeout: duration \"2147483647h\" is too large"},
        RangeCase{"[database]\nstatement_timeout = \"597h\"\n",
                  "seatwatch.toml:2:21: database.statement_timeout: must be at least 1ms and at most 2147483647ms"},
        RangeCase{"[database]\nstatement_timeout = \"596h\"\n", "(no error)"},
        RangeCase{"[database]\nstatement_timeout = \"2147483648ms\"\n",
                  "database.statement_timeout: must be at least 1ms and at most 2147483647ms"},
        RangeCase{"[database]\nstatement_timeout = \"2147483647ms\"\n", "(no error)"},
        RangeCase{"[database]\nstatement_timeout = \"0ms\"\n",
                  "database.statement_timeout: must be at least 1ms and at most 2147483647ms"},
        RangeCase{"[database]\nlock_timeout = \"0s\"\n",
                  "database.lock_timeout: must be at least 1ms and at most 2147483647ms"},
        RangeCase{"[database]\nlock_timeout = \"600h\"\n",
                  "database.lock_timeout: must be at least 1ms and at most 2147483647ms"},
        RangeCase{"[locks]\nstatement_timeout = \"1000h\"\n",
                  "locks.statement_timeout: must be at least 1ms and at most 2147483647ms"},
        RangeCase{"[cleanup]\nstatement_timeout = \"1000h\"\n",
                  "cleanup.statement_timeout: must be at least 1ms and at most 2147483647ms"},
        RangeCase{"[cleanup]\nlock_timeout = \"0ms\"\n",
                  "cleanup.lock_timeout: must be at least 1ms and at most 2147483647ms"},
        // libpq's connect_timeout is an int of whole seconds, and below 2 it
        // is taken as 2.
        RangeCase{"[database]\nconnect_timeout = \"1500ms\"\n",
                  "seatwatch.toml:2:19: database.connect_timeout: must be whole seconds"},
        RangeCase{"[database]\nconnect_timeout = \"1s\"\n",
                  "database.connect_timeout: must be at least 2s and at most 1h"},
        RangeCase{"[database]\nconnect_timeout = \"2147483648s\"\n",
                  "database.connect_timeout: must be at least 2s and at most 1h"},
        RangeCase{"[database]\nconnect_timeout = \"2s\"\n", "(no error)"},
        RangeCase{"[database]\nreconnect_max_backoff = \"2h\"\n",
                  "database.reconnect_max_backoff: must be at least 100ms and at most 1h"},
        // Intervals: at least 100ms, at most a day.
        RangeCase{"[poll]\ninterval = \"24h\"\n", "(no error)"},
        RangeCase{"[poll]\ninterval = \"24h1ms\"\n", "poll.interval: must be at least 100ms and at most 24h"},
        RangeCase{"[poll]\ninterval = \"99ms\"\n", "poll.interval: must be at least 100ms and at most 24h"},
        RangeCase{"[[metric]]\nname = \"m\"\nsql = \"a.sql\"\nvalue = \"v\"\ninterval = \"25h\"\n",
                  "seatwatch.toml:5:12: metric.interval: must be at least 100ms and at most 24h"},
        RangeCase{"[locks]\ninterval = \"48h\"\n", "locks.interval: must be at least 100ms and at most 24h"},
        RangeCase{"[locks]\nlog_threshold = \"48h\"\n", "locks.log_threshold: must be at least 0ms and at most 24h"},
        RangeCase{"[holds]\nsql = \"h.sql\"\ninterval = \"48h\"\n",
                  "holds.interval: must be at least 100ms and at most 24h"},
        RangeCase{"[cleanup]\ninterval = \"48h\"\n", "cleanup.interval: must be at least 100ms and at most 24h"},
        RangeCase{"[cleanup]\nbatch_pause = \"48h\"\n", "cleanup.batch_pause: must be at least 0ms and at most 24h"},
        // A sum that would overflow is refused by the duration parser itself.
        RangeCase{"[poll]\ninterval = \"9223372036854775807ms\"\n", "poll.interval: duration"}),
    [](const ::testing::TestParamInfo<RangeCase>& info) { return "Case" + std::to_string(info.index); });

// A DSN the daemon would refuse at start (exit 2) is a config error at parse
// time, so --check-config refuses it too instead of calling it unreachable.
TEST(ConfigLimitsTest, UnusableConnectionSettingsAreConfigErrors) {
  std::string error = ErrorOf("[database]\ndsn = \"host='unterminated\"\n");
  EXPECT_TRUE(Contains(error, "seatwatch.toml:2:7: database.dsn: cannot parse database DSN")) << error;
  error = ErrorOf("[database]\ndsn = \"postgresql://[::1\"\n");
  EXPECT_TRUE(Contains(error, "seatwatch.toml:2:7: database.dsn: cannot parse database DSN")) << error;
  error = ErrorOf("[database]\ndsn = \"dbname=booking\\u0000 host=elsewhere\"\n");
  EXPECT_TRUE(Contains(error, "seatwatch.toml:2:7: database.dsn: must not contain a NUL character")) << error;
  error = ErrorOf("[database]\ndsn = \"dbname=" + std::string(9000, 'd') + "\"\n");
  EXPECT_TRUE(Contains(error, "database.dsn: is 9007 characters long; at most 8192")) << error;

  error = ErrorOf("[database]\napplication_name = \"sw\\u0000evil\"\n");
  EXPECT_TRUE(Contains(error, "seatwatch.toml:2:20: database.application_name: must not contain control characters"))
      << error;
  // PostgreSQL keeps 63 bytes; the locks and cleanup sessions append up to 8.
  error = ErrorOf("[database]\napplication_name = \"" + std::string(56, 'a') + "\"\n");
  EXPECT_TRUE(Contains(error, "database.application_name: is 56 characters long; at most 55")) << error;
  EXPECT_EQ(ErrorOf("[database]\napplication_name = \"" + std::string(55, 'a') + "\"\n"), "(no error)");
  EXPECT_EQ(ErrorOf("[database]\ndsn = \"host=/tmp port=5432 dbname=booking connect_timeout=2\"\n"),
            "(no error)");
}

TEST(ConfigLimitsTest, SqlPathsMustNotHideANul) {
  std::string error = ErrorOf("[[invariant]]\nname = \"x\"\nsql = \"a.sql\\u0000.txt\"\nvalue = \"v\"\n");
  EXPECT_TRUE(Contains(error, "seatwatch.toml:3:7: invariant.sql: must not contain control characters"))
      << error;
}

TEST(ConfigLimitsTest, AllowNoChecksIsABoolean) {
  EXPECT_EQ(ErrorOf("allow_no_checks = true\n"), "(no error)");
  EXPECT_EQ(ErrorOf("allow_no_checks = false\n"), "(no error)");
  EXPECT_TRUE(Contains(ErrorOf("allow_no_checks = 1\n"), "seatwatch.toml:1:19: allow_no_checks: must be true or false"));
}

}  // namespace
}  // namespace seatwatch::config
