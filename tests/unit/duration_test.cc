#include "util/duration.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace seatwatch::util {
namespace {

TEST(DurationTest, ParsesEachUnit) {
  EXPECT_EQ(ParseDuration("250ms"), Millis(250));
  EXPECT_EQ(ParseDuration("5s"), Millis(5000));
  EXPECT_EQ(ParseDuration("2m"), Millis(120000));
  EXPECT_EQ(ParseDuration("1h"), Millis(3600000));
}

TEST(DurationTest, SumsCompoundValues) {
  EXPECT_EQ(ParseDuration("1m30s"), Millis(90000));
  EXPECT_EQ(ParseDuration("1s500ms"), Millis(1500));
}

TEST(DurationTest, RejectsBareNumbersAndUnknownUnits) {
  EXPECT_THROW(ParseDuration("5"), std::invalid_argument);
  EXPECT_THROW(ParseDuration("5d"), std::invalid_argument);
  EXPECT_THROW(ParseDuration(""), std::invalid_argument);
  EXPECT_THROW(ParseDuration("s"), std::invalid_argument);
  EXPECT_THROW(ParseDuration("-5s"), std::invalid_argument);
  EXPECT_THROW(ParseDuration("99999999999s"), std::invalid_argument);
}

// Each part and each partial sum is checked before it is computed: a long sum
// of large parts used to overflow (signed overflow, UBSan) and wrap around.
TEST(DurationTest, RefusesSumsThatWouldOverflow) {
  std::string sum;
  for (int i = 0; i < 2000; ++i) sum += "2147483647h";
  EXPECT_THROW(ParseDuration(sum), std::invalid_argument);
  EXPECT_THROW(ParseDuration("9223372036854775807ms"), std::invalid_argument);
  EXPECT_THROW(ParseDuration("99999999999999999999999999ms"), std::invalid_argument);
  EXPECT_THROW(ParseDuration("876001h"), std::invalid_argument);
  EXPECT_EQ(ParseDuration("876000h"), Millis(876000LL * 3600 * 1000));
  EXPECT_THROW(ParseDuration("876000h1ms"), std::invalid_argument);
  EXPECT_EQ(ParseDuration("2147483647ms"), Millis(2147483647));
  // At most 100 years: still exact in std::chrono::nanoseconds.
  EXPECT_THROW(ParseDuration("2147483647h"), std::invalid_argument);
  try {
    ParseDuration("2147483647h");
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "duration \"2147483647h\" is too large (at most 876000h)");
  }
  try {
    ParseDuration("5\x1b[2Js");
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "duration \"5\\x1b[2Js\" needs a unit of ms, s, m or h");
  }
  // A long text is quoted only in part.
  try {
    ParseDuration(sum);
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "duration \"" + sum.substr(0, 64) + "...\" (22000 characters) is too large (at most 876000h)");
  }
}

TEST(DurationTest, FormatsTheShortestExactForm) {
  EXPECT_EQ(FormatDuration(Millis(1500)), "1500ms");
  EXPECT_EQ(FormatDuration(Millis(2000)), "2s");
  EXPECT_EQ(FormatDuration(Millis(120000)), "2m");
  EXPECT_EQ(FormatDuration(Millis(7200000)), "2h");
  EXPECT_EQ(FormatDuration(Millis(0)), "0ms");
}

}  // namespace
}  // namespace seatwatch::util
