// Pure helpers too small for a file of their own: readiness, /proc parsing,
// backoff, log formatting, HTTP listen syntax, parameter counting.
#include <gtest/gtest.h>

#include "checks/invariant_check.h"
#include "db/backoff.h"
#include "http/handlers.h"
#include "http/server.h"
#include "metrics/process_metrics.h"
#include "util/log.h"

namespace seatwatch {
namespace {

TEST(ReadinessTest, FollowsTheLastSuccessfulPoll) {
  metrics::Snapshot snapshot;
  snapshot.poll_interval_seconds = 10;
  std::string why;
  EXPECT_FALSE(http::IsReady(snapshot, 1000, &why));
  EXPECT_NE(why.find("no poll"), std::string::npos);
  snapshot.database_up = true;
  snapshot.last_successful_poll_unix = 990;
  EXPECT_TRUE(http::IsReady(snapshot, 1000, &why));
  EXPECT_TRUE(http::IsReady(snapshot, 1020, &why));
  EXPECT_FALSE(http::IsReady(snapshot, 1021, &why));
  snapshot.database_up = false;
  EXPECT_FALSE(http::IsReady(snapshot, 995, &why));
}

TEST(ProcessMetricsTest, ParsesProcStat) {
  // Fields as in proc(5); the command name holds a space and a parenthesis.
  std::string stat =
      "1234 (sea (watch) S 1 1234 1234 0 -1 4194560 500 0 0 0 250 150 0 0 20 0 3 0 "
      "10000 123456789 2048 18446744073709551615";
  auto stats = metrics::ParseProcStat(stat, 100, 4096, 1700000000);
  EXPECT_DOUBLE_EQ(stats.cpu_seconds, 4.0);
  EXPECT_DOUBLE_EQ(stats.start_time_unix, 1700000100);
  EXPECT_DOUBLE_EQ(stats.virtual_bytes, 123456789);
  EXPECT_DOUBLE_EQ(stats.resident_bytes, 2048.0 * 4096);
}

TEST(BackoffTest, DoublesUpToTheCap) {
  db::Backoff backoff(std::chrono::milliseconds(2000));
  EXPECT_EQ(backoff.Next().count(), 250);
  EXPECT_EQ(backoff.Next().count(), 500);
  EXPECT_EQ(backoff.Next().count(), 1000);
  EXPECT_EQ(backoff.Next().count(), 2000);
  EXPECT_EQ(backoff.Next().count(), 2000);
  backoff.Reset();
  EXPECT_EQ(backoff.Next().count(), 250);
}

TEST(LogFormatTest, QuotesValuesThatNeedIt) {
  EXPECT_EQ(log::Format(log::Level::kWarn, "check failed", {{"check", "a"}, {"error", "x \"y\"\n"}}),
            "level=warn msg=\"check failed\" check=a error=\"x \\\"y\\\"\\n\"");
  EXPECT_THROW(log::ParseLevel("loud"), std::invalid_argument);
  EXPECT_EQ(log::ParseLevel("debug"), log::Level::kDebug);
}

// A query text or an application name in a log line comes from the
// database: an ESC sequence must not drive the terminal that shows the log,
// nor a right-to-left override reverse the rest of the line.
TEST(LogFormatTest, ControlAndBidiCharactersAreShownByTheirBytes) {
  EXPECT_EQ(log::Format(log::Level::kInfo, "lock wait",
                        {{"query", "UPDATE seats\x1b[2J\x7f"}, {"app", "a\u202Eb"}}),
            "level=info msg=\"lock wait\" query=\"UPDATE seats\\x1b[2J\\x7f\" "
            "app=\"a\\xe2\\x80\\xaeb\"");
  // Printable UTF-8 stays as it is, unquoted.
  EXPECT_EQ(log::Format(log::Level::kInfo, "m", {{"fan", "Zo\u00eb"}}), "level=info msg=m fan=Zo\u00eb");
}

TEST(ListenTest, ConvertsToCivetwebSyntax) {
  EXPECT_EQ(http::ListeningPorts("127.0.0.1:9646"), "127.0.0.1:9646");
  EXPECT_EQ(http::ListeningPorts("0.0.0.0:9646"), "9646");
  EXPECT_EQ(http::ListeningPorts(":9646"), "9646");
  EXPECT_EQ(http::ListeningPorts("localhost:1"), "127.0.0.1:1");
  EXPECT_EQ(http::ListeningPorts("[::1]:9646"), "+[::1]:9646");
}

TEST(CountParametersTest, FindsTheHighestPlaceholder) {
  EXPECT_EQ(checks::CountParameters("SELECT 1"), 0u);
  EXPECT_EQ(checks::CountParameters("SELECT $1, $2 WHERE x > $1"), 2u);
  EXPECT_EQ(checks::CountParameters("SELECT $12"), 12u);
  EXPECT_EQ(checks::CountParameters("SELECT '$' || x"), 0u);
}

}  // namespace
}  // namespace seatwatch
