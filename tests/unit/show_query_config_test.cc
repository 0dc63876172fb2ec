// [locks] show_query: "normalized" (the default), "raw" or "none"; the
// booleans of earlier versions still parse (false: none, true: normalized).
#include <gtest/gtest.h>

#include "config/parse.h"
#include "support/test_config.h"

namespace seatwatch::config {
namespace {

constexpr const char* kPath = "/etc/seatwatch/seatwatch.toml";
using ShowQuery = LocksConfig::ShowQuery;

ShowQuery Parsed(const std::string& value) {
  return ParseConfig("[locks]\nshow_query = " + value + "\n", kPath).locks.show_query;
}

TEST(ShowQueryConfigTest, NormalizedByDefault) {
  EXPECT_EQ(ParseConfig("", kPath).locks.show_query, ShowQuery::kNormalized);
}

TEST(ShowQueryConfigTest, NamesAndOldBooleans) {
  EXPECT_EQ(Parsed("\"normalized\""), ShowQuery::kNormalized);
  EXPECT_EQ(Parsed("\"raw\""), ShowQuery::kRaw);
  EXPECT_EQ(Parsed("\"none\""), ShowQuery::kNone);
  EXPECT_EQ(Parsed("true"), ShowQuery::kNormalized);
  EXPECT_EQ(Parsed("false"), ShowQuery::kNone);
}

TEST(ShowQueryConfigTest, AnythingElseIsAnError) {
  for (const char* value : {"\"RAW\"", "\"yes\"", "1", "\"\""}) {
    std::string error = testing::ConfigErrorOf(std::string("[locks]\nshow_query = ") + value + "\n", kPath);
    EXPECT_NE(error.find(std::string(kPath) + ":2:14: locks.show_query: must be \"normalized\", \"raw\" or \"none\""),
              std::string::npos)
        << value << ": " << error;
  }
}

}  // namespace
}  // namespace seatwatch::config
