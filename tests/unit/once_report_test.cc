#include "report/once_report.h"

#include <gtest/gtest.h>

#include <functional>

#include "unit/text_expectations.h"

namespace seatwatch::report {
namespace {

using seatwatch::testing::ExpectContains;

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

// Check(name, false) as a run that failed with `reason` and `error`.
metrics::CheckStatus Failed(const std::string& name, const std::string& reason,
                            const std::string& error) {
  metrics::CheckStatus status = Check(name, false);
  status.success = false;
  status.output.reset();
  status.last_reason = reason;
  status.last_error = error;
  return status;
}

// Check("b", true), its output changed by `edit`.
metrics::CheckStatus ViolatedWith(const std::function<void(metrics::CheckOutput&)>& edit) {
  metrics::CheckStatus status = Check("b", true);
  metrics::CheckOutput output = *status.output;
  edit(output);
  status.output = std::make_shared<const metrics::CheckOutput>(output);
  return status;
}

// Check("b", true) with `value` as its violation's key.
metrics::CheckStatus ViolatedWithKey(const std::string& value) {
  return ViolatedWith([&](metrics::CheckOutput& output) {
    output.invariants[0].violations[0].labels[0].value = value;
  });
}

metrics::PollState UpState(std::vector<metrics::CheckStatus> checks) {
  metrics::PollState state;
  state.database_up = true;
  state.checks = std::move(checks);
  return state;
}

// The report of `state` read from one reachable DSN.
std::string ReportOf(const metrics::PollState& state) {
  return FormatOnceReport(state, {{"checks", "host=db", true}});
}

TEST(OnceReportTest, ExitCodes) {
  metrics::PollState state = UpState({Check("a", false)});
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
  metrics::PollState state =
      UpState({Check("a", false), Check("b", true),
               Failed("c", "timeout", "canceling statement due to statement timeout")});
  std::string text = FormatOnceReport(state, {{"checks", "host=db password=****", true}});
  ExpectContains(text, {"  OK        a\n", "  VIOLATED  b  (1 rows, total 4)", "event_id=3  4",
                        "A12", "  UNKNOWN   c  (check c failed: timeout: canceling",
                        "FAILED CHECKS"});
}

// Every byte of the report that came from the database is printed so that
// it cannot drive the terminal (an ESC sequence can retitle the window,
// hide text or forge a line): control characters and bytes that are not
// UTF-8 are shown as \xNN, newlines and tabs as \n and \t.
TEST(OnceReportTest, ControlCharactersFromTheDatabaseAreEscaped) {
  auto violated = ViolatedWith([](metrics::CheckOutput& output) {
    output.invariants[0].violations[0].labels[0].value = "3\x1b]0;pwned\x07";
    output.invariants[0].help = "two\nlines";
    output.invariants[0].detail->columns = {"seat\x1b[2J"};
    output.invariants[0].detail->rows = {{std::string("A\r\n  OK  x\x9b\xc2\x9b\xff\t")}};
    output.report = "LOCKS\n  1 query=\x1b[31mred\n";
  });
  metrics::CheckStatus metric;
  metric.name = "m";
  metric.has_run = true;
  metric.success = true;
  metric.output = std::make_shared<const metrics::CheckOutput>();
  metric.rendered = metrics::RenderedText::Of(
      "# HELP seatwatch_m Rows.\n# TYPE seatwatch_m gauge\nseatwatch_m{k=\"\x1b[5mblink\"} 1\n");
  std::string text = ReportOf(UpState(
      {violated, metric, Failed("c", "sql", "relation \"x\x1b[8m\" does not exist\nLINE 1: ...")}));
  for (unsigned char c : text) {
    EXPECT_TRUE(c == '\n' || (c >= 0x20 && c < 0x7f)) << "byte " << int(c) << " in\n" << text;
  }
  ExpectContains(text, {"event_id=3\\x1b]0;pwned\\x07  4", "two\\nlines", "seat\\x1b[2J",
                        "A\\r\\n  OK  x\\x9b\\xc2\\x9b\\xff\\t",
                        "seatwatch_m{k=\"\\x1b[5mblink\"} 1",
                        "relation \"x\\x1b[8m\" does not exist\\nLINE 1", "query=\\x1b[31mred\n"});
  EXPECT_EQ(text.find("\n  OK  x"), std::string::npos) << text;
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

// The head of the report (its database and server lines) of a poll that
// read `servers` through `lanes`.
std::string HeadOf(std::vector<metrics::LaneServer> servers, const std::vector<OnceLane>& lanes,
                   bool database_up = true) {
  metrics::PollState state = UpState({});
  state.database_up = database_up;
  state.servers = std::move(servers);
  std::string report = FormatOnceReport(state, lanes);
  return report.substr(0, report.find("\n\n"));
}

// Both lanes on one DSN and one server: one line for each, as with one lane.
TEST(OnceReportTest, LanesOnOneServerShareTheirLines) {
  EXPECT_EQ(HeadOf({Server("checks", false, 1), Server("locks", false, 1)},
                   {{"checks", "host=db", true}, {"locks", "host=db", true}}),
            "seatwatch report\ndatabase: host=db (reachable)\nserver: primary");
}

// [checks] dsn on a standby: each lane's DSN, whether it was reached, and the
// server it read; an unreachable lane has no server line.
TEST(OnceReportTest, EachLaneSaysItsDsnAndServer) {
  EXPECT_EQ(HeadOf({Server("checks", true, 1), Server("locks", false, 1)},
                   {{"checks", "host=standby", true}, {"locks", "host=primary", true}}),
            "seatwatch report\n"
            "database (checks lane): host=standby (reachable)\n"
            "database (locks lane): host=primary (reachable)\n"
            "server (checks lane): standby, replay 0.4 s behind\n"
            "server (locks lane): primary");
  EXPECT_EQ(HeadOf({Server("locks", false, 1)},
                   {{"checks", "host=standby", false}, {"locks", "host=primary", true}},
                   /*database_up=*/false),
            "seatwatch report\n"
            "database (checks lane): host=standby (UNREACHABLE)\n"
            "database (locks lane): host=primary (reachable)\n"
            "server (locks lane): primary");
}

// A right-to-left override in a key would reverse the rest of the line on
// the terminal.
TEST(OnceReportTest, BidiControlsFromTheDatabaseAreEscaped) {
  std::string text = ReportOf(UpState({ViolatedWithKey("A12\u202E\u2067x")}));
  ExpectContains(text, {"event_id=A12\\xe2\\x80\\xae\\xe2\\x81\\xa7x  4"});
  EXPECT_EQ(text.find("\u202E"), std::string::npos) << text;
}

// Printable UTF-8 (an accented name, a euro sign) is shown as it is.
TEST(OnceReportTest, PrintableUtf8IsKept) {
  std::string text = ReportOf(UpState({ViolatedWithKey("Z\xc3\xbcrich \xe2\x82\xac")}));
  ExpectContains(text, {"event_id=Z\xc3\xbcrich \xe2\x82\xac  4"});
}

}  // namespace
}  // namespace seatwatch::report
