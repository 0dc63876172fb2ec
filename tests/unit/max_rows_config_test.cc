// [[invariant]] / [[metric]] max_rows: default, range, type.
#include <gtest/gtest.h>

#include "config/parse.h"
#include "support/test_config.h"

namespace seatwatch::config {
namespace {

constexpr const char* kPath = "/etc/seatwatch/seatwatch.toml";

std::string Metric(const std::string& extra) {
  return "[[metric]]\nname = \"m\"\nsql = \"m.sql\"\nvalue = \"n\"\n" + extra;
}

TEST(MaxRowsConfigTest, DefaultAndExplicit) {
  EXPECT_EQ(ParseConfig(Metric(""), kPath).queries.at(0).max_rows, 100000);
  EXPECT_EQ(ParseConfig(Metric("max_rows = 1\n"), kPath).queries.at(0).max_rows, 1);
  EXPECT_EQ(ParseConfig(Metric("max_rows = 10000000\n"), kPath).queries.at(0).max_rows, 10000000);
  Config invariant = ParseConfig(
      "[[invariant]]\nname = \"i\"\nsql = \"i.sql\"\nvalue = \"v\"\nmax_rows = 50\n", kPath);
  EXPECT_EQ(invariant.queries.at(0).max_rows, 50);
}

TEST(MaxRowsConfigTest, OutOfRangeOrWrongTypeIsAnError) {
  EXPECT_EQ(testing::ConfigErrorOf(Metric("max_rows = 0\n"), kPath),
            "/etc/seatwatch/seatwatch.toml:5:12: metric.max_rows: must be between 1 and "
            "10000000 (got 0)");
  EXPECT_NE(testing::ConfigErrorOf(Metric("max_rows = 10000001\n"), kPath).find("(got 10000001)"),
            std::string::npos);
  EXPECT_NE(testing::ConfigErrorOf(Metric("max_rows = -5\n"), kPath).find("metric.max_rows"),
            std::string::npos);
  EXPECT_NE(testing::ConfigErrorOf(Metric("max_rows = \"100\"\n"), kPath)
                .find("metric.max_rows: must be an integer"),
            std::string::npos);
}

}  // namespace
}  // namespace seatwatch::config
