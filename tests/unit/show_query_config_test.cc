// [locks] show_query: "normalized" (the default), "raw" or "none"; nothing
// else, booleans included.
#include <gtest/gtest.h>

#include "unit/config_text.h"

namespace seatwatch::config {
namespace {

using ShowQuery = LocksConfig::ShowQuery;

ShowQuery Parsed(const std::string& value) {
  return ParseText("[locks]\nshow_query = " + value + "\n").locks.show_query;
}

std::string Refusal() {
  return std::string(kPath) +
         ":2:14: locks.show_query: must be \"normalized\", \"raw\" or \"none\"";
}

TEST(ShowQueryConfigTest, NormalizedByDefault) {
  EXPECT_EQ(ParseText("").locks.show_query, ShowQuery::kNormalized);
}

TEST(ShowQueryConfigTest, NamesButNotBooleans) {
  EXPECT_EQ(Parsed("\"normalized\""), ShowQuery::kNormalized);
  EXPECT_EQ(Parsed("\"raw\""), ShowQuery::kRaw);
  EXPECT_EQ(Parsed("\"none\""), ShowQuery::kNone);
  EXPECT_EQ(ErrorOf("[locks]\nshow_query = true\n"), Refusal());
  EXPECT_EQ(ErrorOf("[locks]\nshow_query = false\n"), Refusal());
}

TEST(ShowQueryConfigTest, AnythingElseIsAnError) {
  for (const char* value : {"\"RAW\"", "\"yes\"", "1", "\"\""}) {
    std::string error = ErrorOf(std::string("[locks]\nshow_query = ") + value + "\n");
    EXPECT_NE(error.find(Refusal()), std::string::npos) << value << ": " << error;
  }
}

}  // namespace
}  // namespace seatwatch::config
