// The parameters a detail query receives: the offending keys first, then the
// entry's params, cut to what the query names.
#include <gtest/gtest.h>

#include "checks/detail_parameters.h"
#include "db/array_literal.h"

namespace seatwatch::checks {
namespace {

metrics::Violation Row(std::vector<metrics::Label> labels, double value) {
  return {std::move(labels), value};
}

TEST(DetailParametersTest, OneDistinctSortedArrayPerLabelThenParams) {
  std::vector<metrics::Violation> violations = {
      Row({{"event_id", "17"}, {"zone", "north"}}, 2),
      Row({{"event_id", "4"}, {"zone", "north"}}, 1),
      Row({{"event_id", "17"}, {"zone", "south"}}, 3),
  };
  auto params = DetailParameters({"event_id", "zone"}, violations, {"4", "x"}, 4);
  EXPECT_EQ(params,
            (std::vector<std::string>{R"({"17","4"})", R"({"north","south"})", "4", "x"}));
}

TEST(DetailParametersTest, OnlyAsManyAsTheQueryNames) {
  std::vector<metrics::Violation> violations = {Row({{"event_id", "4"}}, 1)};
  EXPECT_TRUE(DetailParameters({"event_id"}, violations, {"4"}, 0).empty());
  EXPECT_EQ(DetailParameters({"event_id"}, violations, {"4"}, 1),
            std::vector<std::string>{R"({"4"})"});
  EXPECT_EQ(DetailParameters({"event_id"}, violations, {"4"}, 2),
            (std::vector<std::string>{R"({"4"})", "4"}));
  // Naming more than there are passes what there is; the server reports the
  // missing one when the query runs.
  EXPECT_EQ(DetailParameters({"event_id"}, violations, {}, 3).size(), 1u);
}

TEST(DetailParametersTest, AnEntryWithoutLabelsPassesItsParams) {
  std::vector<metrics::Violation> violations = {Row({}, 5)};
  EXPECT_EQ(DetailParameters({}, violations, {"4", "7"}, 1), std::vector<std::string>{"4"});
}

TEST(ArrayLiteralTest, QuotesEveryElementAndEscapesQuotesAndBackslashes) {
  EXPECT_EQ(db::TextArrayLiteral({}), "{}");
  EXPECT_EQ(db::TextArrayLiteral({"a", "b c", "NULL"}), R"({"a","b c","NULL"})");
  EXPECT_EQ(db::TextArrayLiteral({R"(say "hi")", R"(back\slash)", "{,}"}),
            R"({"say \"hi\"","back\\slash","{,}"})");
}

}  // namespace
}  // namespace seatwatch::checks
