#include "report/once_report.h"

#include <gtest/gtest.h>

namespace seatwatch::report {
namespace {

metrics::CheckStatus Check(const std::string& name, bool violated) {
  metrics::CheckStatus status;
  status.name = name;
  status.has_run = true;
  status.success = true;
  status.invariants = {name};
  metrics::CheckOutput output;
  metrics::InvariantResult result;
  result.name = name;
  if (violated) result.violations.push_back({{{"event_id", "3"}}, 4});
  metrics::DetailRows detail;
  detail.columns = {"event_id", "seat"};
  detail.rows = {{std::string("3"), std::string("A12")}};
  if (violated) result.detail = detail;
  output.invariants.push_back(result);
  status.output = std::make_shared<const metrics::CheckOutput>(output);
  return status;
}

TEST(OnceReportTest, ExitCodes) {
  metrics::PollState state;
  state.database_up = true;
  state.checks = {Check("a", false)};
  EXPECT_EQ(OnceExitCode(state), 0);
  state.checks.push_back(Check("b", true));
  EXPECT_EQ(OnceExitCode(state), 1);
  state.checks = {Check("a", false)};
  state.checks[0].success = false;
  state.checks[0].output.reset();
  EXPECT_EQ(OnceExitCode(state), 1);
  state.database_up = false;
  EXPECT_EQ(OnceExitCode(state), 3);
}

TEST(OnceReportTest, ShowsViolationsDetailAndFailures) {
  metrics::PollState state;
  state.database_up = true;
  auto failing = Check("c", false);
  failing.success = false;
  failing.output.reset();
  failing.last_reason = "timeout";
  failing.last_error = "canceling statement due to statement timeout";
  state.checks = {Check("a", false), Check("b", true), failing};
  std::string text = FormatOnceReport(state, {{"checks", "host=db password=****", true}});
  EXPECT_NE(text.find("  OK        a\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  VIOLATED  b  (1 rows, total 4)"), std::string::npos) << text;
  EXPECT_NE(text.find("event_id=3  4"), std::string::npos) << text;
  EXPECT_NE(text.find("A12"), std::string::npos) << text;
  EXPECT_NE(text.find("  UNKNOWN   c  (check c failed: timeout: canceling"), std::string::npos) << text;
  EXPECT_NE(text.find("FAILED CHECKS"), std::string::npos) << text;
}

// Every byte of the report that came from the database is printed so that
// it cannot drive the terminal (an ESC sequence can retitle the window,
// hide text or forge a line): control characters and bytes that are not
// UTF-8 are shown as \xNN, newlines and tabs as \n and \t.
TEST(OnceReportTest, ControlCharactersFromTheDatabaseAreEscaped) {
  metrics::PollState state;
  state.database_up = true;
  auto violated = Check("b", true);
  metrics::CheckOutput output = *violated.output;
  output.invariants[0].violations[0].labels[0].value = "3\x1b]0;pwned\x07";
  output.invariants[0].help = "two\nlines";
  output.invariants[0].detail->columns = {"seat\x1b[2J"};
  output.invariants[0].detail->rows = {{std::string("A\r\n  OK  x\x9b\xc2\x9b\xff\t")}};
  output.report = "LOCKS\n  1 query=\x1b[31mred\n";
  violated.output = std::make_shared<const metrics::CheckOutput>(output);
  metrics::CheckStatus metric;
  metric.name = "m";
  metric.has_run = true;
  metric.success = true;
  metric.output = std::make_shared<const metrics::CheckOutput>();
  metric.rendered = std::make_shared<const std::string>(
      "# HELP seatwatch_m Rows.\n# TYPE seatwatch_m gauge\nseatwatch_m{k=\"\x1b[5mblink\"} 1\n");
  auto failing = Check("c", false);
  failing.success = false;
  failing.output.reset();
  failing.last_reason = "sql";
  failing.last_error = "relation \"x\x1b[8m\" does not exist\nLINE 1: ...";
  state.checks = {violated, metric, failing};
  std::string text = FormatOnceReport(state, {{"checks", "host=db", true}});
  for (unsigned char c : text) {
    EXPECT_TRUE(c == '\n' || (c >= 0x20 && c < 0x7f)) << "byte " << int(c) << " in\n" << text;
  }
  EXPECT_NE(text.find("event_id=3\\x1b]0;pwned\\x07  4"), std::string::npos) << text;
  EXPECT_NE(text.find("two\\nlines"), std::string::npos) << text;
  EXPECT_NE(text.find("seat\\x1b[2J"), std::string::npos) << text;
  EXPECT_NE(text.find("A\\r\\n  OK  x\\x9b\\xc2\\x9b\\xff\\t"), std::string::npos) << text;
  EXPECT_EQ(text.find("\n  OK  x"), std::string::npos) << text;
  EXPECT_NE(text.find("seatwatch_m{k=\"\\x1b[5mblink\"} 1"), std::string::npos) << text;
  EXPECT_NE(text.find("relation \"x\\x1b[8m\" does not exist\\nLINE 1"), std::string::npos)
      << text;
  EXPECT_NE(text.find("query=\\x1b[31mred\n"), std::string::npos) << text;
}

metrics::LaneServer Server(const std::string& lane, bool in_recovery, std::uint32_t timeline) {
  metrics::LaneServer server;
  server.lane = lane;
  server.facts.in_recovery = in_recovery;
  server.facts.replica_lag_seconds = in_recovery ? 0.4 : 0;
  server.facts.system_identifier = "7001";
  server.facts.timeline = timeline;
  return server;
}

// Both lanes on one DSN and one server: one line for each, as with one lane.
TEST(OnceReportTest, LanesOnOneServerShareTheirLines) {
  metrics::PollState state;
  state.database_up = true;
  state.servers = {Server("checks", false, 1), Server("locks", false, 1)};
  std::string text =
      FormatOnceReport(state, {{"checks", "host=db", true}, {"locks", "host=db", true}});
  EXPECT_EQ(text.substr(0, text.find("\n\n")),
            "seatwatch report\ndatabase: host=db (reachable)\nserver: primary")
      << text;
}

// [checks] dsn on a standby: each lane's DSN, whether it was reached, and the
// server it read; an unreachable lane has no server line.
TEST(OnceReportTest, EachLaneSaysItsDsnAndServer) {
  metrics::PollState state;
  state.database_up = true;
  state.servers = {Server("checks", true, 1), Server("locks", false, 1)};
  std::string text =
      FormatOnceReport(state, {{"checks", "host=standby", true}, {"locks", "host=primary", true}});
  EXPECT_EQ(text.substr(0, text.find("\n\n")),
            "seatwatch report\n"
            "database (checks lane): host=standby (reachable)\n"
            "database (locks lane): host=primary (reachable)\n"
            "server (checks lane): standby, replay 0.4 s behind\n"
            "server (locks lane): primary")
      << text;
  state.database_up = false;
  state.servers = {Server("locks", false, 1)};
  text = FormatOnceReport(state,
                          {{"checks", "host=standby", false}, {"locks", "host=primary", true}});
  EXPECT_EQ(text.substr(0, text.find("\n\n")),
            "seatwatch report\n"
            "database (checks lane): host=standby (UNREACHABLE)\n"
            "database (locks lane): host=primary (reachable)\n"
            "server (locks lane): primary")
      << text;
}

// A right-to-left override in a key would reverse the rest of the line on
// the terminal.
TEST(OnceReportTest, BidiControlsFromTheDatabaseAreEscaped) {
  metrics::PollState state;
  state.database_up = true;
  auto violated = Check("b", true);
  metrics::CheckOutput output = *violated.output;
  output.invariants[0].violations[0].labels[0].value = "A12\u202E\u2067x";
  violated.output = std::make_shared<const metrics::CheckOutput>(output);
  state.checks = {violated};
  std::string text = FormatOnceReport(state, {{"checks", "host=db", true}});
  EXPECT_NE(text.find("event_id=A12\\xe2\\x80\\xae\\xe2\\x81\\xa7x  4"), std::string::npos) << text;
  EXPECT_EQ(text.find("\u202E"), std::string::npos) << text;
}

// Printable UTF-8 (an accented name, a euro sign) is shown as it is.
TEST(OnceReportTest, PrintableUtf8IsKept) {
  metrics::PollState state;
  state.database_up = true;
  auto violated = Check("b", true);
  metrics::CheckOutput output = *violated.output;
  output.invariants[0].violations[0].labels[0].value = "Z\xc3\xbcrich \xe2\x82\xac";
  violated.output = std::make_shared<const metrics::CheckOutput>(output);
  state.checks = {violated};
  std::string text = FormatOnceReport(state, {{"checks", "host=db", true}});
  EXPECT_NE(text.find("event_id=Z\xc3\xbcrich \xe2\x82\xac  4"), std::string::npos) << text;
}

}  // namespace
}  // namespace seatwatch::report
