// [[invariant]] / [[metric]] max_rows: default, range, type.
#include <gtest/gtest.h>

#include "config/parse.h"
#include "unit/config_text.h"

namespace seatwatch::config {
namespace {

std::string Metric(const std::string& extra) {
  return "[[metric]]\nname = \"m\"\nsql = \"m.sql\"\nvalue = \"n\"\n" + extra;
}

TEST(MaxRowsConfigTest, DefaultAndExplicit) {
  EXPECT_EQ(ParseText(Metric("")).queries.at(0).max_rows, 100000);
  EXPECT_EQ(ParseText(Metric("max_rows = 1\n")).queries.at(0).max_rows, 1);
  EXPECT_EQ(ParseText(Metric("max_rows = 10000000\n")).queries.at(0).max_rows, 10000000);
  Config invariant = ParseText(
      "[[invariant]]\nname = \"i\"\nsql = \"i.sql\"\nvalue = \"v\"\nmax_rows = 50\n");
  EXPECT_EQ(invariant.queries.at(0).max_rows, 50);
}

TEST(MaxRowsConfigTest, OutOfRangeOrWrongTypeIsAnError) {
  EXPECT_EQ(ErrorOf(Metric("max_rows = 0\n")),
            "/etc/seatwatch/seatwatch.toml:5:12: metric.max_rows: must be between 1 and "
            "10000000 (got 0)");
  EXPECT_NE(ErrorOf(Metric("max_rows = 10000001\n")).find("(got 10000001)"),
            std::string::npos);
  EXPECT_NE(ErrorOf(Metric("max_rows = -5\n")).find("metric.max_rows"),
            std::string::npos);
  EXPECT_NE(ErrorOf(Metric("max_rows = \"100\"\n"))
                .find("metric.max_rows: must be an integer"),
            std::string::npos);
}

}  // namespace
}  // namespace seatwatch::config
