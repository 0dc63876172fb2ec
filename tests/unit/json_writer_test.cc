#include "util/json_writer.h"

#include <gtest/gtest.h>

namespace seatwatch::util {
namespace {

TEST(JsonWriterTest, WritesNestedValuesWithCommas) {
  JsonWriter json;
  json.BeginObject();
  json.Key("a").Int(1);
  json.Key("b").BeginArray().String("x").Null().Bool(true).Number(0.5).EndArray();
  json.Key("c").BeginObject().EndObject();
  json.EndObject();
  EXPECT_EQ(json.str(), R"({"a":1,"b":["x",null,true,0.5],"c":{}})");
}

TEST(JsonWriterTest, EscapesControlCharactersAndQuotes) {
  EXPECT_EQ(JsonEscape("a\"b\\c\nd\x01"), "a\\\"b\\\\c\\nd\\u0001");
}

TEST(JsonWriterTest, NonFiniteNumbersBecomeNull) {
  JsonWriter json;
  json.BeginArray().Number(1.0 / 0.0).EndArray();
  EXPECT_EQ(json.str(), "[null]");
}

}  // namespace
}  // namespace seatwatch::util
