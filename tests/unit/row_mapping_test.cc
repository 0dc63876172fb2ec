#include "metrics/row_mapping.h"

#include <gtest/gtest.h>

#include <cmath>

#include "metrics/gauge_text.h"

namespace seatwatch::metrics {
namespace {

db::Rows MakeRows(std::vector<std::string> columns, std::vector<std::vector<db::Rows::Cell>> values) {
  db::Rows rows;
  rows.columns = std::move(columns);
  rows.values = std::move(values);
  return rows;
}

TEST(RowMappingTest, GaugesOnePerRowInLabelOrder) {
  auto rows = MakeRows({"kind", "count", "event_id"},
                       {{"sold", "12", "1"}, {"free", "3", "2"}});
  auto binding = BindColumns(rows, {"event_id", "kind"}, "count", "");
  EXPECT_EQ(RowsToGaugeText("seatwatch_inv", "", rows, binding),
            "# TYPE seatwatch_inv gauge\n"
            "seatwatch_inv{event_id=\"1\",kind=\"sold\"} 12\n"
            "seatwatch_inv{event_id=\"2\",kind=\"free\"} 3\n");
}

TEST(RowMappingTest, NullValueRowsBelongToAnotherEntry) {
  auto rows = MakeRows({"event_id", "invariant", "violations", "kind", "count"},
                       {{"1", "x", "2", std::nullopt, std::nullopt},
                        {"1", std::nullopt, std::nullopt, "seats_sold", "40"}});
  auto metric = BindColumns(rows, {"event_id", "kind"}, "count", "");
  EXPECT_EQ(RowsToGaugeText("seatwatch_inv", "", rows, metric),
            "# TYPE seatwatch_inv gauge\nseatwatch_inv{event_id=\"1\",kind=\"seats_sold\"} 40\n");
  auto invariant = BindColumns(rows, {"event_id"}, "violations", "invariant");
  auto grouped = RowsToViolations(rows, invariant, {"x", "y"});
  ASSERT_EQ(grouped.size(), 2u);
  ASSERT_EQ(grouped["x"].size(), 1u);
  EXPECT_DOUBLE_EQ(grouped["x"][0].value, 2);
  EXPECT_TRUE(grouped["y"].empty());
}

TEST(RowMappingTest, NullLabelBecomesEmpty) {
  auto rows = MakeRows({"event_id", "violations"}, {{std::nullopt, "1"}});
  auto binding = BindColumns(rows, {"event_id"}, "violations", "");
  EXPECT_EQ(RowsToGaugeText("seatwatch_v", "", rows, binding),
            "# TYPE seatwatch_v gauge\nseatwatch_v{event_id=\"\"} 1\n");
  auto grouped = RowsToViolations(rows, binding, {"solo"});
  ASSERT_EQ(grouped["solo"].size(), 1u);
  EXPECT_EQ(grouped["solo"][0].labels[0].value, "");
}

TEST(RowMappingTest, SingleInvariantTakesEveryRow) {
  auto rows = MakeRows({"event_id", "violations"}, {{"1", "2"}, {"2", "0"}});
  auto grouped = RowsToViolations(rows, BindColumns(rows, {"event_id"}, "violations", ""), {"solo"});
  ASSERT_EQ(grouped["solo"].size(), 2u);
}

TEST(RowMappingTest, UnlistedInvariantIsAnError) {
  auto rows = MakeRows({"invariant", "violations"}, {{"surprise", "1"}});
  auto binding = BindColumns(rows, {}, "violations", "invariant");
  EXPECT_THROW(RowsToViolations(rows, binding, {"known"}), std::runtime_error);
}

TEST(RowMappingTest, MissingColumnNamesKeyAndColumns) {
  auto rows = MakeRows({"a", "b"}, {});
  try {
    BindColumns(rows, {"event_id"}, "b", "");
    FAIL() << "expected MissingColumn";
  } catch (const MissingColumn& e) {
    EXPECT_EQ(e.key(), "labels");
    EXPECT_NE(std::string(e.what()).find("\"event_id\""), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("a, b"), std::string::npos);
  }
  EXPECT_THROW(BindColumns(rows, {}, "v", ""), MissingColumn);
  EXPECT_THROW(BindColumns(rows, {}, "a", "inv"), MissingColumn);
}

TEST(RowMappingTest, ParsesPostgresNumbers) {
  EXPECT_DOUBLE_EQ(ParseNumber("42"), 42);
  EXPECT_DOUBLE_EQ(ParseNumber("-1.5"), -1.5);
  EXPECT_DOUBLE_EQ(ParseNumber("t"), 1);
  EXPECT_DOUBLE_EQ(ParseNumber("f"), 0);
  EXPECT_TRUE(std::isnan(ParseNumber("NaN")));
  EXPECT_TRUE(std::isinf(ParseNumber("Infinity")));
  EXPECT_THROW(ParseNumber("12abc"), std::invalid_argument);
  EXPECT_THROW(ParseNumber(""), std::invalid_argument);
}

}  // namespace
}  // namespace seatwatch::metrics
