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

TEST(DurationTest, FormatsTheShortestExactForm) {
  EXPECT_EQ(FormatDuration(Millis(1500)), "1500ms");
  EXPECT_EQ(FormatDuration(Millis(2000)), "2s");
  EXPECT_EQ(FormatDuration(Millis(120000)), "2m");
  EXPECT_EQ(FormatDuration(Millis(7200000)), "2h");
  EXPECT_EQ(FormatDuration(Millis(0)), "0ms");
}

}  // namespace
}  // namespace seatwatch::util
