#include "util/json_writer.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "util/utf8.h"

namespace seatwatch::util {

const char* ShortEscape(char c) {
  switch (c) {
    case '"': return "\\\"";
    case '\\': return "\\\\";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    case '\b': return "\\b";
    case '\f': return "\\f";
    default: return nullptr;
  }
}

std::string JsonEscape(std::string_view value) {
  std::string out;
  out.reserve(value.size() + 2);
  for (size_t i = 0; i < value.size(); ++i) {
    char c = value[i];
    auto u = static_cast<unsigned char>(c);
    if (u >= 0x80) {
      // JSON is UTF-8: a byte that is not (a SQL_ASCII database passes any)
      // becomes U+FFFD rather than an invalid document.
      size_t length = Utf8SequenceLength(value, i);
      if (length == 0) {
        out.append("\xef\xbf\xbd");
      } else {
        out.append(value.substr(i, length));
        i += length - 1;
      }
      continue;
    }
    if (const char* escape = ShortEscape(c)) {
      out.append(escape);
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out.append(buf);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!has_element_.empty()) {
    if (has_element_.back()) out_.push_back(',');
    has_element_.back() = true;
  }
}

JsonWriter& JsonWriter::Open(char bracket) {
  BeforeValue();
  out_.push_back(bracket);
  has_element_.push_back(false);
  return *this;
}

JsonWriter& JsonWriter::Close(char bracket) {
  out_.push_back(bracket);
  has_element_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::BeginObject() { return Open('{'); }
JsonWriter& JsonWriter::EndObject() { return Close('}'); }
JsonWriter& JsonWriter::BeginArray() { return Open('['); }
JsonWriter& JsonWriter::EndArray() { return Close(']'); }

JsonWriter& JsonWriter::Key(std::string_view key) {
  BeforeValue();
  out_.push_back('"');
  out_.append(JsonEscape(key));
  out_.append("\":");
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::String(std::string_view value) {
  BeforeValue();
  out_.push_back('"');
  out_.append(JsonEscape(value));
  out_.push_back('"');
  return *this;
}

JsonWriter& JsonWriter::Number(double value) {
  BeforeValue();
  if (!std::isfinite(value)) {
    out_.append("null");
    return *this;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", value);
  // Prefer the short form when it round-trips, so 0.5 prints as 0.5.
  char short_buf[32];
  std::snprintf(short_buf, sizeof short_buf, "%.6g", value);
  if (std::strtod(short_buf, nullptr) == value) {
    out_.append(short_buf);
  } else {
    out_.append(buf);
  }
  return *this;
}

JsonWriter& JsonWriter::Int(std::int64_t value) {
  BeforeValue();
  out_.append(std::to_string(value));
  return *this;
}

JsonWriter& JsonWriter::Bool(bool value) {
  BeforeValue();
  out_.append(value ? "true" : "false");
  return *this;
}

JsonWriter& JsonWriter::Null() {
  BeforeValue();
  out_.append("null");
  return *this;
}

JsonWriter& JsonWriter::OptionalString(const std::optional<std::string>& value) {
  return value ? String(*value) : Null();
}

JsonWriter& JsonWriter::Raw(std::string_view json) {
  BeforeValue();
  out_.append(json);
  return *this;
}

}  // namespace seatwatch::util
