#include "metrics/row_mapping.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "db/failure.h"
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

// What PostgreSQL's int, numeric, float and boolean output can be, and
// nothing else: strtod alone takes hex, "inf", leading blanks and values it
// cannot represent.
TEST(RowMappingTest, StrictNumberTable) {
  struct Good {
    const char* text;
    double value;
  };
  for (const Good& good : std::vector<Good>{{"0", 0},
                                             {"-0", 0},
                                             {"42", 42},
                                             {"-17", -17},
                                             {"123.4500", 123.45},
                                             {"-0.5", -0.5},
                                             {"1e+20", 1e20},
                                             {"1.2345678901234567e-07", 1.2345678901234567e-07},
                                             {"-2.5E+300", -2.5e300},
                                             {"9007199254740993", 9007199254740993.0},
                                             {"1e-310", 1e-310},  // subnormal: still a value
                                             {"t", 1},
                                             {"f", 0},
                                             {"true", 1},  // boolean::text
                                             {"false", 0}}) {
    SCOPED_TRACE(good.text);
    EXPECT_DOUBLE_EQ(ParseNumber(good.text), good.value);
  }
  EXPECT_TRUE(std::isnan(ParseNumber("NaN")));
  EXPECT_EQ(ParseNumber("Infinity"), std::numeric_limits<double>::infinity());
  EXPECT_EQ(ParseNumber("-Infinity"), -std::numeric_limits<double>::infinity());
  for (const char* bad : {"", " ", "0x1A", "0X1a", "1e-400", "-1e-400", "1e400", "-1e999",
                          " 1", "1 ", "1 000", "\t1", "1\n", "+-1", "--1", "+", "-", ".", "1.",
                          ".5", "1e", "1e+", "e5", "1.2.3", "1,5", "inf", "-inf", "INF",
                          "infinity", "+Infinity", "INFINITY", "nan", "NAN", "-NaN", "True",
                          "FALSE", "yes", "12abc", "\xef\xbc\x91"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(ParseNumber(bad), std::invalid_argument);
  }
  // numeric's output is exact: beyond what a double holds it is refused, not
  // rounded to 0 or infinity.
  EXPECT_THROW(ParseNumber("0." + std::string(400, '0') + "1"), std::invalid_argument);
  EXPECT_THROW(ParseNumber("1" + std::string(400, '0')), std::invalid_argument);
}

// The reason a check would be counted under for what `call` throws, or
// "(no error)".
template <typename Call>
std::string ReasonOf(Call call) {
  try {
    call();
  } catch (const std::exception& e) {
    return db::ReasonLabel(db::ClassifyException(e));
  }
  return "(no error)";
}

TEST(RowMappingTest, ValuesThatAreNotNumbersAreBadValues) {
  auto rows = MakeRows({"event_id", "n"}, {{"1", "0x1A"}});
  auto binding = BindColumns(rows, {"event_id"}, "n", "");
  EXPECT_EQ(ReasonOf([&] { RowsToGaugeText("seatwatch_n", "", rows, binding); }), "bad_value");
  EXPECT_EQ(ReasonOf([&] { RowsToViolations(rows, binding, {"solo"}); }), "bad_value");
}

// An invariant's value counts offending rows: NaN, a negative or an infinite
// count is a broken query, not a verdict (NaN != 0 would read as violated,
// -3 would cancel real violations out of the total).
TEST(RowMappingTest, InvariantValueMustBeACount) {
  for (const char* value : {"NaN", "-1", "-0.5", "Infinity", "-Infinity"}) {
    SCOPED_TRACE(value);
    auto rows = MakeRows({"event_id", "violations"}, {{"1", "2"}, {"2", value}});
    auto binding = BindColumns(rows, {"event_id"}, "violations", "");
    EXPECT_EQ(ReasonOf([&] { RowsToViolations(rows, binding, {"solo"}); }), "bad_value");
  }
  auto rows = MakeRows({"event_id", "violations"}, {{"1", "0"}, {"2", "-0"}, {"3", "2.5"}});
  auto grouped = RowsToViolations(rows, BindColumns(rows, {"event_id"}, "violations", ""), {"solo"});
  ASSERT_EQ(grouped["solo"].size(), 3u);
  EXPECT_DOUBLE_EQ(grouped["solo"][2].value, 2.5);
}

// NULL and '' both export as an empty label: two series with one label set,
// of which Prometheus keeps one and drops the other without a word.
TEST(RowMappingTest, DuplicateLabelSetsFailTheFamily) {
  auto rows = MakeRows({"event_id", "kind", "n"},
                       {{"1", "sold", "3"}, {std::nullopt, "sold", "1"}, {"", "sold", "2"}});
  auto binding = BindColumns(rows, {"event_id", "kind"}, "n", "");
  EXPECT_EQ(ReasonOf([&] { RowsToGaugeText("seatwatch_n", "", rows, binding); }),
            "duplicate_series");
  EXPECT_EQ(ReasonOf([&] { RowsToViolations(rows, binding, {"solo"}); }), "duplicate_series");

  // No labels: a second row is a second sample of the one series.
  auto two = MakeRows({"n"}, {{"1"}, {"2"}});
  auto unlabelled = BindColumns(two, {}, "n", "");
  EXPECT_EQ(ReasonOf([&] { RowsToGaugeText("seatwatch_n", "", two, unlabelled); }),
            "duplicate_series");

  // Label values that only look alike once joined are different series.
  auto joined = MakeRows({"a", "b", "n"}, {{"x,", "y", "1"}, {"x", ",y", "2"}, {"x=", "", "3"}});
  auto pair = BindColumns(joined, {"a", "b"}, "n", "");
  EXPECT_EQ(ReasonOf([&] { RowsToGaugeText("seatwatch_n", "", joined, pair); }), "(no error)");
  EXPECT_EQ(ReasonOf([&] { RowsToViolations(joined, pair, {"solo"}); }), "(no error)");

  // The same label set under two invariants of one pass is two series.
  auto multi = MakeRows({"invariant", "event_id", "v"}, {{"x", "1", "1"}, {"y", "1", "1"}});
  auto by_invariant = BindColumns(multi, {"event_id"}, "v", "invariant");
  EXPECT_EQ(ReasonOf([&] { RowsToViolations(multi, by_invariant, {"x", "y"}); }), "(no error)");
  auto clash = MakeRows({"invariant", "event_id", "v"}, {{"x", "1", "1"}, {"x", "1", "0"}});
  EXPECT_EQ(ReasonOf([&] { RowsToViolations(clash, by_invariant, {"x", "y"}); }),
            "duplicate_series");

  // Rows of another entry (NULL value) are not this family's series.
  auto shared = MakeRows({"event_id", "n"}, {{"1", "1"}, {"1", std::nullopt}});
  EXPECT_EQ(ReasonOf([&] { RowsToGaugeText("seatwatch_n", "", shared,
                                           BindColumns(shared, {"event_id"}, "n", "")); }),
            "(no error)");
}

}  // namespace
}  // namespace seatwatch::metrics
