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
  checks::CheckOutput output;
  checks::InvariantResult result;
  result.name = name;
  if (violated) result.violations.push_back({{{"event_id", "3"}}, 4});
  checks::DetailRows detail;
  detail.columns = {"event_id", "seat"};
  detail.rows = {{std::string("3"), std::string("A12")}};
  if (violated) result.detail = detail;
  output.invariants.push_back(result);
  status.output = std::make_shared<const checks::CheckOutput>(output);
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
  std::string text = FormatOnceReport(state, "host=db password=****");
  EXPECT_NE(text.find("  OK        a\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  VIOLATED  b  (1 rows, total 4)"), std::string::npos) << text;
  EXPECT_NE(text.find("event_id=3  4"), std::string::npos) << text;
  EXPECT_NE(text.find("A12"), std::string::npos) << text;
  EXPECT_NE(text.find("  UNKNOWN   c  (check c failed: timeout: canceling"), std::string::npos) << text;
  EXPECT_NE(text.find("FAILED CHECKS"), std::string::npos) << text;
}

}  // namespace
}  // namespace seatwatch::report
