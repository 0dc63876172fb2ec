// HTML escaping for the status page: what comes from the database shows as
// text and never as markup.
#include "page/html_escape.h"

#include <gtest/gtest.h>

#include "page/page_format.h"

namespace seatwatch::page {
namespace {

TEST(HtmlEscapeTest, MarkupBecomesText) {
  EXPECT_EQ(HtmlEscape("<script>alert(1)</script>"), "&lt;script&gt;alert(1)&lt;/script&gt;");
  EXPECT_EQ(HtmlEscape("a & b"), "a &amp; b");
  EXPECT_EQ(HtmlEscape("&lt;"), "&amp;lt;");  // already-escaped text stays text
}

TEST(HtmlEscapeTest, QuotesCannotEndAnAttribute) {
  EXPECT_EQ(HtmlEscape("\" onmouseover=\"x"), "&quot; onmouseover=&quot;x");
  EXPECT_EQ(HtmlEscape("' onload='x"), "&#39; onload=&#39;x");
}

TEST(HtmlEscapeTest, PlainTextAndUtf8AreKept) {
  EXPECT_EQ(HtmlEscape("seats(event_id=1, seat=A12)"), "seats(event_id=1, seat=A12)");
  EXPECT_EQ(HtmlEscape("Zoë – 席"), "Zoë – 席");
  EXPECT_EQ(HtmlEscape("a\tb\nc"), "a\tb\nc");
  EXPECT_EQ(HtmlEscape(""), "");
}

TEST(HtmlEscapeTest, BadBytesAndControlsAreShownNotPassed) {
  const std::string replacement = "\xEF\xBF\xBD";  // U+FFFD
  EXPECT_EQ(HtmlEscape(std::string("a\xff") + "b"), "a" + replacement + "b");  // not UTF-8
  EXPECT_EQ(HtmlEscape("\xC3"), replacement);  // a sequence cut short
  EXPECT_EQ(HtmlEscape(std::string("x\0y", 3)), "x\\x00y");
  EXPECT_EQ(HtmlEscape("\x1b[2J\r\x7f"), "\\x1b[2J\\x0d\\x7f");
}

// A right-to-left override (U+202E) in a seat name would reverse the text
// after it on the page: every bidirectional control is shown by its bytes.
TEST(HtmlEscapeTest, BidiControlsAreShownNotObeyed) {
  EXPECT_EQ(HtmlEscape("A12\u202Egpj.exe"), "A12\\xe2\\x80\\xaegpj.exe");
  EXPECT_EQ(HtmlEscape("\u061C\u200E\u200F\u202A\u202B\u202C\u202D\u2066\u2067\u2068\u2069"),
            "\\xd8\\x9c\\xe2\\x80\\x8e\\xe2\\x80\\x8f\\xe2\\x80\\xaa\\xe2\\x80\\xab"
            "\\xe2\\x80\\xac\\xe2\\x80\\xad\\xe2\\x81\\xa6\\xe2\\x81\\xa7\\xe2\\x81\\xa8"
            "\\xe2\\x81\\xa9");
  // Their neighbours in the same blocks are ordinary text.
  EXPECT_EQ(HtmlEscape("\u2010\u2030\u2065\u206A\u0620"), "\u2010\u2030\u2065\u206A\u0620");
}

TEST(PageFormatTest, AgesReadAtAGlance) {
  EXPECT_EQ(FormatAge(0.42), "0.4s");
  EXPECT_EQ(FormatAge(12), "12.0s");
  EXPECT_EQ(FormatAge(192), "3m 12s");
  EXPECT_EQ(FormatAge(2 * 3600 + 5 * 60 + 9), "2h 05m");
  EXPECT_EQ(FormatAge(3 * 86400 + 4 * 3600), "3d 4h");
  EXPECT_EQ(FormatAge(-3), "0.0s");
}

TEST(PageFormatTest, TimesAndNumbers) {
  EXPECT_EQ(FormatUtc(0), "never");
  EXPECT_EQ(FormatUtc(1796146810), "2026-12-01 17:40:10 UTC");
  EXPECT_EQ(FormatWhen(1796146810, 1796146810 + 192), "2026-12-01 17:40:10 UTC (3m 12s ago)");
  EXPECT_EQ(FormatNumber(3), "3");
  EXPECT_EQ(FormatNumber(2.5), "2.5");
}

}  // namespace
}  // namespace seatwatch::page
