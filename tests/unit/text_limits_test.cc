// The small pieces that keep hostile text in bounds: UTF-8 repair and
// cutting, the detail-row caps, the JSON size cap, terminal escaping.
#include <gtest/gtest.h>

#include "checks/detail_limits.h"
#include "metrics/exposition_escape.h"
#include "metrics/json_cap.h"
#include "report/terminal_text.h"
#include "support/test_env.h"
#include "util/json_writer.h"
#include "util/utf8.h"

namespace seatwatch {
namespace {

TEST(Utf8Test, RepairsIllFormedBytes) {
  EXPECT_EQ(util::ValidUtf8("plain"), "plain");
  EXPECT_EQ(util::ValidUtf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x8e\xab"),
            "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x8e\xab");
  const std::string fffd = "\xef\xbf\xbd";
  EXPECT_EQ(util::ValidUtf8("a\xff" "b"), "a" + fffd + "b");
  EXPECT_EQ(util::ValidUtf8("\xc0\xaf"), fffd + fffd);        // overlong '/'
  EXPECT_EQ(util::ValidUtf8("\xed\xa0\x80"), fffd + fffd + fffd);  // a surrogate
  EXPECT_EQ(util::ValidUtf8("\xf4\x90\x80\x80"), fffd + fffd + fffd + fffd);  // > U+10FFFF
  EXPECT_EQ(util::ValidUtf8("end \xe2\x82"), "end " + fffd + fffd);
  EXPECT_TRUE(util::IsValidUtf8("caf\xc3\xa9"));
  EXPECT_FALSE(util::IsValidUtf8("caf\xc3"));
}

TEST(Utf8Test, PrefixNeverSplitsACharacter) {
  std::string text = "ab\xc3\xa9\xe2\x82\xac";  // a b é €
  EXPECT_EQ(util::Utf8Prefix(text, 100), text.size());
  EXPECT_EQ(util::Utf8Prefix(text, 3), 2u);
  EXPECT_EQ(util::Utf8Prefix(text, 4), 4u);
  EXPECT_EQ(util::Utf8Prefix(text, 5), 4u);
  EXPECT_EQ(util::Utf8Prefix(text, 6), 4u);
  EXPECT_EQ(util::Utf8Prefix(text, 0), 0u);
}

TEST(ExpositionEscapeTest, HelpAndLabelValues) {
  EXPECT_EQ(metrics::EscapedHelp("a\\b\nc \"q\""), "a\\\\b\\nc \"q\"");
  std::string label;
  metrics::AppendEscapedLabelValue(label, "a\\b\nc \"q\" \xff");
  EXPECT_EQ(label, "a\\\\b\\nc \\\"q\\\" \xef\xbf\xbd");
}

// JSON must be UTF-8; a label or detail value from a SQL_ASCII database
// may not be.
TEST(JsonEscapeTest, IllFormedUtf8BecomesReplacementCharacters) {
  EXPECT_EQ(util::JsonEscape("ok \xc3\xa9 \xff\x01"), "ok \xc3\xa9 \xef\xbf\xbd\\u0001");
}

TEST(DetailLimitsTest, CutsValuesAndDropsRowsBeyondTheTotal) {
  metrics::DetailRows detail;
  detail.columns = {"n", "text"};
  for (int i = 0; i < 10; ++i) {
    detail.rows.push_back({std::to_string(i), std::string(5000, 'x')});
  }
  detail.rows.push_back({std::string("null"), std::nullopt});
  checks::ApplyDetailLimits(detail, {100, 600});
  EXPECT_TRUE(detail.truncated);
  ASSERT_EQ(detail.rows.size(), 4u);  // 5 bytes of names + 4 rows of 127 bytes <= 600
  EXPECT_EQ(*detail.rows[0][1], std::string(100, 'x') + "...[truncated, 5000 bytes]");
  EXPECT_EQ(*detail.rows[3][0], "3");

  metrics::DetailRows small;
  small.columns = {"n"};
  small.rows = {{std::string("1")}, {std::nullopt}};
  checks::ApplyDetailLimits(small);
  EXPECT_FALSE(small.truncated);
  EXPECT_EQ(small.rows.size(), 2u);

  metrics::DetailRows failed;
  failed.error = std::string(5000, 'e');
  checks::ApplyDetailLimits(failed);
  EXPECT_LT(failed.error.size(), 1100u);
  EXPECT_TRUE(failed.truncated);
}

int PythonJson(const std::string& json, const std::string& check, std::string* output) {
  std::string dir = testing::MakeTempDir("seatwatch-json");
  testing::WriteFile(dir + "/doc.json", json);
  testing::WriteFile(dir + "/check.py",
                     "import json, sys\nd = json.load(open(sys.argv[1]))\nok = " + check +
                         "\nprint(d)\nsys.exit(0 if ok else 1)\n");
  return testing::RunCommand("python3 " + dir + "/check.py " + dir + "/doc.json", output);
}

TEST(JsonCapTest, KeepsWholeElementsAndStaysValid) {
  std::string json =
      "{\"a\": 1, \"list\": [\"x,]}\", {\"b\": [1, 2]}, \"yyyyyyyyyyyyyyyyyyyy\"], \"z\": {}}";
  EXPECT_EQ(metrics::CapJson(json, json.size()), json);
  // Every cap from the smallest to the whole: one document per cap, checked
  // in one run of the parser.
  std::string all = "[";
  for (size_t cap = 20; cap < json.size(); ++cap) {
    SCOPED_TRACE(cap);
    std::string cut = metrics::CapJson(json, cap);
    EXPECT_LE(cut.size(), cap);
    all += (cap == 20 ? "" : ",") + cut;
  }
  all += "]";
  std::string output;
  EXPECT_EQ(PythonJson(all, "all(x['truncated'] is True for x in d) and len(d) == " +
                                std::to_string(json.size() - 20),
                       &output),
            0)
      << output << all;
  EXPECT_EQ(metrics::CapJson(json, 43), "{\"a\": 1, \"list\": [\"x,]}\"],\"truncated\":true}");
  EXPECT_EQ(metrics::CapJson(json, 42), "{\"a\": 1, \"list\": [],\"truncated\":true}");
  EXPECT_EQ(metrics::CapJson(json, 26), "{\"a\": 1,\"truncated\":true}");
  EXPECT_EQ(metrics::CapJson(json, 25), "{\"truncated\":true}");
  EXPECT_EQ(metrics::CapJson("[1, 2, 3]", 5), "{\"truncated\":true}");
}

TEST(TerminalTextTest, EscapesControlsKeepsPrintableUtf8) {
  EXPECT_EQ(report::TerminalSafe("a\x1b[2Jb\x07\n\r\t\x7f"), "a\\x1b[2Jb\\x07\\n\\r\\t\\x7f");
  EXPECT_EQ(report::TerminalSafe("\xc2\x9b" "1m \xc2\xa0 caf\xc3\xa9 \xff"),
            "\\xc2\\x9b1m \xc2\xa0 caf\xc3\xa9 \\xff");
  EXPECT_EQ(report::TerminalSafeLines("one\ntwo\x1b"), "one\ntwo\\x1b");
}

}  // namespace
}  // namespace seatwatch
