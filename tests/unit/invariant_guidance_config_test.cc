// [[invariant]]'s invariant_help table and runbook_url: each invariant's own
// help text and the link to its runbook entry, and the errors that name the
// file, line and key.
#include <gtest/gtest.h>

#include "config/parse.h"
#include "support/test_config.h"

namespace seatwatch::config {
namespace {

constexpr const char* kPath = "/etc/seatwatch/seatwatch.toml";

constexpr const char* kEntry = R"([[invariant]]
name = "booking"
sql = "rec.sql"
help = "Seats, tickets and payments must agree"
invariant_column = "invariant"
invariants = ["sold_seat_without_ticket", "fan_over_limit"]
value = "violations"
)";

TEST(InvariantGuidanceConfigTest, EachInvariantItsOwnHelpAndRunbookEntry) {
  Config config =
      ParseConfig(std::string(kEntry) + R"(runbook_url = "https://example.com/runbook.md"
[invariant.invariant_help]
sold_seat_without_ticket = "A seat is sold but has no ticket"
)",
                  kPath);
  const QueryConfig& entry = config.queries.at(0);
  EXPECT_EQ(entry.HelpOf("sold_seat_without_ticket"), "A seat is sold but has no ticket");
  EXPECT_EQ(entry.HelpOf("fan_over_limit"), "Seats, tickets and payments must agree");
  EXPECT_EQ(entry.RunbookOf("fan_over_limit"), "https://example.com/runbook.md#fan_over_limit");
}

TEST(InvariantGuidanceConfigTest, ARunbookUrlWithItsOwnAnchorIsKept) {
  Config config = ParseConfig(R"([[invariant]]
name = "oversold"
sql = "a.sql"
value = "v"
runbook_url = "https://wiki.example.com/Oversold#what-to-do"
invariant_help = { oversold = "More tickets than seats" }
)",
                              kPath);
  const QueryConfig& entry = config.queries.at(0);
  EXPECT_EQ(entry.RunbookOf("oversold"), "https://wiki.example.com/Oversold#what-to-do");
  EXPECT_EQ(entry.HelpOf("oversold"), "More tickets than seats");
}

TEST(InvariantGuidanceConfigTest, NoRunbookUrlNoLink) {
  Config config = ParseConfig(kEntry, kPath);
  EXPECT_EQ(config.queries.at(0).RunbookOf("fan_over_limit"), "");
  EXPECT_EQ(config.queries.at(0).HelpOf("fan_over_limit"),
            "Seats, tickets and payments must agree");
}

struct BadCase {
  std::string toml;
  std::string error;
};

class InvariantGuidanceBadTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(InvariantGuidanceBadTest, NamesFileLineAndKey) {
  std::string error = testing::ConfigErrorOf(GetParam().toml, kPath);
  EXPECT_NE(error.find(GetParam().error), std::string::npos) << error;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, InvariantGuidanceBadTest,
    ::testing::Values(
        BadCase{
            std::string(kEntry) + "[invariant.invariant_help]\nsold_seat_without_tiket = \"x\"\n",
            "/etc/seatwatch/seatwatch.toml:9:1: invariant.invariant_help.sold_seat_without_tiket: "
            "is not one of this entry's invariants"},
        BadCase{std::string(kEntry) + "[invariant.invariant_help]\nfan_over_limit = 4\n",
                "seatwatch.toml:9:1: invariant.invariant_help.fan_over_limit: must be a string"},
        BadCase{std::string(kEntry) + "invariant_help = \"x\"\n",
                "seatwatch.toml:8:18: invariant.invariant_help: must be a table"},
        BadCase{std::string(kEntry) + "invariant_help = { fan_over_limit = \"a\\u0007b\" }\n",
                "invariant.invariant_help.fan_over_limit: must not contain control characters"},
        BadCase{
            std::string(kEntry) + "runbook_url = \"docs/runbook.md\"\n",
            "seatwatch.toml:8:15: invariant.runbook_url: \"docs/runbook.md\" must be an http:// "
            "or https:// URL"},
        BadCase{std::string(kEntry) + "runbook_url = \"https://x/a b\"\n",
                "invariant.runbook_url: \"https://x/a b\" must be an http:// or https:// URL"},
        BadCase{"[[metric]]\nname = \"m\"\nsql = \"a.sql\"\nvalue = \"v\"\nrunbook_url = "
                "\"https://x\"\n",
                "metric.runbook_url: is only valid in [[invariant]]"},
        BadCase{"[[metric]]\nname = \"m\"\nsql = \"a.sql\"\nvalue = \"v\"\ninvariant_help = { m = "
                "\"x\" }\n",
                "metric.invariant_help: is only valid in [[invariant]]"}),
    [](const ::testing::TestParamInfo<BadCase>& info) {
      return "Case" + std::to_string(info.index);
    });

}  // namespace
}  // namespace seatwatch::config
