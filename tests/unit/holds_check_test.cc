// The [holds] section: its config, the row-to-gauges mapping, and the check's
// place in the registry. No database.
#include "checks/holds_check.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "checks/registry.h"
#include "config/config_error.h"
#include "config/parse.h"
#include "metrics/row_mapping.h"
#include "metrics/snapshot_builder.h"

namespace seatwatch::checks {
namespace {

using namespace std::chrono_literals;

constexpr const char* kPath = "/etc/seatwatch/seatwatch.toml";

db::Rows HoldsRows(std::vector<db::Rows::Cell> row) {
  db::Rows rows;
  rows.columns = HoldsColumns();
  rows.values.push_back(std::move(row));
  return rows;
}

std::string ErrorOf(const std::function<void()>& action) {
  try {
    action();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

void ExpectCounts(const HoldsCounts& counts, double active, double expired,
                  double expired_oldest_seconds, double payments_lapsed) {
  EXPECT_EQ(counts.active, active);
  EXPECT_EQ(counts.expired, expired);
  EXPECT_EQ(counts.expired_oldest_seconds, expired_oldest_seconds);
  EXPECT_EQ(counts.payments_lapsed, payments_lapsed);
}

TEST(HoldsFromRowsTest, ReadsTheOneRow) {
  ExpectCounts(HoldsFromRows(HoldsRows({"7", "3", "125.5", "2"})), 7, 3, 125.5, 2);
}

TEST(HoldsFromRowsTest, ColumnOrderDoesNotMatterAndNullIsZero) {
  db::Rows rows;
  rows.columns = {"payments_lapsed", "holds_expired_oldest_seconds", "holds_expired",
                  "holds_active", "extra"};
  rows.values.push_back({"4", std::nullopt, "0", "9", "x"});
  ExpectCounts(HoldsFromRows(rows), 9, 0, 0, 4);
}

TEST(HoldsFromRowsTest, MissingColumnIsNamed) {
  db::Rows rows;
  rows.columns = {"holds_active", "holds_expired", "payments_lapsed"};
  rows.values.push_back({"1", "2", "3"});
  EXPECT_THROW(HoldsFromRows(rows), metrics::MissingColumn);
  std::string error = ErrorOf([&] { HoldsFromRows(rows); });
  EXPECT_NE(error.find("\"holds_expired_oldest_seconds\" is not in the query's result"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("holds_active, holds_expired, payments_lapsed"), std::string::npos) << error;
}

TEST(HoldsFromRowsTest, RejectsAnythingButOneRow) {
  db::Rows none;
  none.columns = HoldsColumns();
  EXPECT_NE(ErrorOf([&] { HoldsFromRows(none); }).find("exactly one row (it returned 0)"),
            std::string::npos);
  db::Rows two = HoldsRows({"1", "1", "1", "1"});
  two.values.push_back({"1", "1", "1", "1"});
  EXPECT_NE(ErrorOf([&] { HoldsFromRows(two); }).find("(it returned 2)"), std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              HoldsFromRows(HoldsRows({"1", "many", "1", "1"}));
            }).find("column \"holds_expired\""),
            std::string::npos);
}

TEST(HoldsFamiliesTest, FourGaugesWithTheirValues) {
  HoldsCounts counts;
  counts.active = 5;
  counts.expired = 12;
  counts.expired_oldest_seconds = 61;
  counts.payments_lapsed = 1;
  std::string text = metrics::RenderText(HoldsFamilies(counts));
  EXPECT_NE(text.find("# TYPE seatwatch_holds_active gauge\nseatwatch_holds_active 5\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\nseatwatch_holds_expired 12\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nseatwatch_holds_expired_oldest_seconds 61\n"), std::string::npos) << text;
  EXPECT_NE(text.find("# TYPE seatwatch_payments_lapsed gauge\nseatwatch_payments_lapsed 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# HELP seatwatch_holds_expired Seats still marked held"), std::string::npos);
}

TEST(HoldsConfigTest, SectionTurnsItOnWithPollIntervalByDefault) {
  config::Config config = config::ParseConfig(R"(
[poll]
interval = "7s"
[holds]
sql = "../queries/booking/holds.sql"
)",
                                              kPath);
  EXPECT_TRUE(config.holds.enabled);
  EXPECT_EQ(config.holds.sql_path, "/etc/queries/booking/holds.sql");
  EXPECT_FALSE(config.holds.interval.has_value());
  auto checks = BuildChecks(config);
  auto holds = std::find_if(checks.begin(), checks.end(),
                            [](const auto& check) { return check->name() == "holds"; });
  ASSERT_NE(holds, checks.end());
  EXPECT_EQ((*holds)->interval(), 7s);
  EXPECT_TRUE((*holds)->shares_snapshot());
}

TEST(HoldsConfigTest, OwnIntervalAndOff) {
  config::Config config =
      config::ParseConfig("[holds]\nsql = \"holds.sql\"\ninterval = \"30s\"\n", kPath);
  auto checks = BuildChecks(config);
  auto holds = std::find_if(checks.begin(), checks.end(),
                            [](const auto& check) { return check->name() == "holds"; });
  ASSERT_NE(holds, checks.end());
  EXPECT_EQ((*holds)->interval(), 30s);

  config::Config off = config::ParseConfig("[holds]\nenabled = false\n", kPath);
  EXPECT_FALSE(off.holds.enabled);
  for (const auto& check : BuildChecks(off)) EXPECT_NE(check->name(), "holds");
  for (const auto& check : BuildChecks(config::ParseConfig("", kPath))) {
    EXPECT_NE(check->name(), "holds");
  }
}

TEST(HoldsConfigTest, BadSections) {
  auto error = [](const std::string& toml) {
    return ErrorOf([&] { config::ParseConfig(toml, kPath); });
  };
  EXPECT_NE(error("[holds]\n").find("holds.sql: is required"), std::string::npos);
  EXPECT_NE(
      error("[holds]\nsql = \"h.sql\"\nintervall = \"5s\"\n").find("holds.intervall: unknown key"),
      std::string::npos);
  EXPECT_NE(error("[holds]\nsql = \"h.sql\"\ninterval = \"5\"\n").find("holds.interval"),
            std::string::npos);
  EXPECT_NE(error("[holds]\nsql = \"h.sql\"\ninterval = \"10ms\"\n").find("must be at least 100ms"),
            std::string::npos);
}

}  // namespace
}  // namespace seatwatch::checks
