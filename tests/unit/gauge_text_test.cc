// RowsToGaugeText must write exactly what prometheus-cpp's serializer writes
// for the same rows as a family.
#include "metrics/gauge_text.h"

#include <gtest/gtest.h>

#include "metrics/family.h"
#include "metrics/snapshot_builder.h"
#include "support/test_env.h"

namespace seatwatch::metrics {
namespace {

db::Rows MakeRows(std::vector<std::string> columns,
                  std::vector<std::vector<db::Rows::Cell>> values) {
  db::Rows rows;
  rows.columns = std::move(columns);
  rows.values = std::move(values);
  return rows;
}

// The reference: the same rows as a prometheus-cpp family, rendered by its
// serializer.
std::string ViaFamily(const std::string& name, const std::string& help, const db::Rows& rows,
                      const ColumnBinding& binding) {
  prometheus::MetricFamily family;
  family.name = name;
  family.help = help;
  family.type = prometheus::MetricType::Gauge;
  for (const auto& row : rows.values) {
    const auto& value = row[binding.value_index];
    if (!value) continue;
    prometheus::ClientMetric sample;
    for (size_t i = 0; i < binding.label_indexes.size(); ++i) {
      sample.label.push_back({binding.label_names[i], row[binding.label_indexes[i]].value_or("")});
    }
    sample.gauge.value = ParseNumber(*value);
    family.metric.push_back(std::move(sample));
  }
  return RenderText({family});
}

TEST(GaugeTextTest, SameTextAsTheSerializer) {
  auto rows = MakeRows(
      {"event_id", "kind", "count"},
      {{"1", "seats_sold", "550"},
       {"2", "seats_free", "0"},
       {"3", "with \"quote\"", "0.1"},
       {"4", "back\\slash\nnewline", "-12.5"},
       {std::nullopt, "null label", "1e+20"},
       {"6", "tiny", "1.2345678901234567e-7"},
       {"7", "third", "0.3333333333333333"},
       {"8", "skipped", std::nullopt},
       {"9", "big int", "9007199254740993"},
       {"10", "nan", "NaN"},
       {"11", "inf", "Infinity"},
       {"12", "minus inf", "-Infinity"},
       {"13", "bool", "t"}});
  auto binding = BindColumns(rows, {"event_id", "kind"}, "count", "");
  std::string text = RowsToGaugeText("seatwatch_inv", "Inventory (from the last poll).", rows,
                                     binding);
  EXPECT_EQ(text, ViaFamily("seatwatch_inv", "Inventory (from the last poll).", rows, binding));
  EXPECT_NE(text.find("seatwatch_inv{event_id=\"1\",kind=\"seats_sold\"} 550\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("skipped"), std::string::npos);
}

TEST(GaugeTextTest, NoLabelsAndNoHelp) {
  auto rows = MakeRows({"n"}, {{"42"}});
  auto binding = BindColumns(rows, {}, "n", "");
  EXPECT_EQ(RowsToGaugeText("seatwatch_n", "", rows, binding), "# TYPE seatwatch_n gauge\nseatwatch_n 42\n");
  EXPECT_EQ(RowsToGaugeText("seatwatch_n", "", rows, binding), ViaFamily("seatwatch_n", "", rows, binding));
}

TEST(GaugeTextTest, NothingWhenNoRowHasAValue) {
  auto rows = MakeRows({"event_id", "n"}, {{"1", std::nullopt}});
  auto binding = BindColumns(rows, {"event_id"}, "n", "");
  EXPECT_EQ(RowsToGaugeText("seatwatch_n", "help", rows, binding), "");
  EXPECT_EQ(ViaFamily("seatwatch_n", "help", rows, binding), "");
}

TEST(GaugeTextTest, ANonNumberThrows) {
  auto rows = MakeRows({"n"}, {{"twelve"}});
  auto binding = BindColumns(rows, {}, "n", "");
  EXPECT_THROW(RowsToGaugeText("seatwatch_n", "", rows, binding), std::exception);
}

// promtool's verdict on an exposition: its exit status and what it said.
int Promtool(const std::string& text, std::string* output) {
  std::string dir = testing::MakeTempDir("seatwatch-expo");
  testing::WriteFile(dir + "/metrics.txt", text);
  return testing::RunCommand("promtool check metrics < " + dir + "/metrics.txt", output);
}

// A help written over several lines in the config would end the HELP
// comment at its first newline and make the rest a malformed sample line:
// Prometheus then rejects the whole scrape, every check's series with it.
TEST(GaugeTextTest, HelpIsEscapedAsTheTextFormatRequires) {
  auto rows = MakeRows({"n"}, {{"1"}});
  auto binding = BindColumns(rows, {}, "n", "");
  std::string text = RowsToGaugeText("seatwatch_n", "Seats sold.\nOne per row, C:\\temp\\ \"quoted\"", rows, binding);
  EXPECT_EQ(text,
            "# HELP seatwatch_n Seats sold.\\nOne per row, C:\\\\temp\\\\ \"quoted\"\n"
            "# TYPE seatwatch_n gauge\nseatwatch_n 1\n");
  std::string output;
  EXPECT_EQ(Promtool(text, &output), 0) << output << text;

  // Families built by hand go through the same escaping.
  auto family = GaugeFamily("seatwatch_sample", "first line\nsecond \\ line");
  AddGauge(family, {{"k", "v"}}, 2);
  std::string rendered = RenderText({family});
  EXPECT_NE(rendered.find("# HELP seatwatch_sample first line\\nsecond \\\\ line\n"),
            std::string::npos)
      << rendered;
  EXPECT_EQ(Promtool(rendered, &output), 0) << output << rendered;
}

// Label values straight from the database: quotes, backslashes, newlines,
// control characters and bytes that are not UTF-8 (a SQL_ASCII database
// passes any byte through). Prometheus refuses a scrape with a label value
// that is not UTF-8, so such bytes are replaced by U+FFFD.
TEST(GaugeTextTest, HostileLabelValuesGiveAValidExposition) {
  auto rows = MakeRows({"k", "n"}, {{"line\nbreak", "1"},
                                    {"quote\" and \\ backslash", "2"},
                                    {"ctl \x01\x07\x1b[31mred\r\t\x7f", "3"},
                                    {"bad \xff\xfe utf8 \xc3\x28 \xe2\x82", "4"},
                                    {"fine \xc3\xa9\xe2\x82\xac\xf0\x9f\x8e\xab", "5"},
                                    {"overlong \xc0\xaf surrogate \xed\xa0\x80", "6"}});
  auto binding = BindColumns(rows, {"k"}, "n", "");
  std::string text = RowsToGaugeText("seatwatch_n", "Hostile labels.", rows, binding);
  std::string output;
  EXPECT_EQ(Promtool(text, &output), 0) << output << text;
  EXPECT_NE(text.find("seatwatch_n{k=\"line\\nbreak\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("seatwatch_n{k=\"quote\\\" and \\\\ backslash\"} 2\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("seatwatch_n{k=\"bad \xef\xbf\xbd\xef\xbf\xbd utf8 \xef\xbf\xbd( "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("fine \xc3\xa9\xe2\x82\xac\xf0\x9f\x8e\xab\""), std::string::npos)
      << text;
  EXPECT_EQ(text.find("\xc0"), std::string::npos) << text;
  EXPECT_EQ(text.find("\xed\xa0"), std::string::npos) << text;
}

}  // namespace
}  // namespace seatwatch::metrics
