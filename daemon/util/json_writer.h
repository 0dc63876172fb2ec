#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace seatwatch::util {

// A minimal streaming JSON writer for the HTTP API and reports. It tracks
// where commas go; callers pair Begin*/End* themselves. Not thread-safe.
class JsonWriter {
 public:
  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  JsonWriter& Key(std::string_view key);
  JsonWriter& String(std::string_view value);
  JsonWriter& Number(double value);
  JsonWriter& Int(std::int64_t value);
  JsonWriter& Bool(bool value);
  JsonWriter& Null();
  JsonWriter& OptionalString(const std::optional<std::string>& value);
  // Inserts already-serialized JSON as one value.
  JsonWriter& Raw(std::string_view json);

  const std::string& str() const { return out_; }

 private:
  void BeforeValue();
  JsonWriter& Open(char bracket);
  JsonWriter& Close(char bracket);

  std::string out_;
  // One entry per open container: true once it holds a first element.
  std::vector<bool> has_element_;
  bool after_key_ = false;
};

std::string JsonEscape(std::string_view value);

// The two-character escape a JSON string has for `c` (\" \\ \n \r \t \b
// \f), or null. The log quotes its values with the same escapes.
const char* ShortEscape(char c);

}  // namespace seatwatch::util
