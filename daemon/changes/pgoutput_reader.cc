#include "changes/pgoutput_reader.h"

#include <cstring>

#include "changes/pgoutput_error.h"

namespace seatwatch::changes {

namespace {

std::uint64_t BigEndian(std::string_view bytes) {
  std::uint64_t value = 0;
  for (char c : bytes) value = (value << 8) | static_cast<unsigned char>(c);
  return value;
}

}  // namespace

std::string PgoutputReader::DescribeByte(unsigned char byte) {
  static const char kHex[] = "0123456789abcdef";
  std::string text = "0x";
  text += kHex[byte >> 4];
  text += kHex[byte & 15];
  if (byte >= 0x20 && byte < 0x7f) text += std::string(" '") + static_cast<char>(byte) + "'";
  return text;
}

void PgoutputReader::Fail(std::size_t at, const std::string& why) const {
  throw PgoutputError("pgoutput " + std::string(message_name_) + " message at byte " +
                      std::to_string(at) + ": " + why);
}

std::size_t PgoutputReader::Take(std::size_t count, const char* field) {
  if (count > remaining()) {
    Fail(offset_, std::string(field) + " needs " + std::to_string(count) + " bytes, " +
                      std::to_string(remaining()) + " left");
  }
  std::size_t start = offset_;
  offset_ += count;
  return start;
}

std::uint8_t PgoutputReader::Byte(const char* field) {
  return static_cast<unsigned char>(bytes_[Take(1, field)]);
}

std::int16_t PgoutputReader::Int16(const char* field) {
  return static_cast<std::int16_t>(BigEndian(bytes_.substr(Take(2, field), 2)));
}

std::int32_t PgoutputReader::Int32(const char* field) {
  return static_cast<std::int32_t>(BigEndian(bytes_.substr(Take(4, field), 4)));
}

std::int64_t PgoutputReader::Int64(const char* field) {
  return static_cast<std::int64_t>(BigEndian(bytes_.substr(Take(8, field), 8)));
}

std::string PgoutputReader::String(const char* field) {
  const void* nul =
      remaining() == 0 ? nullptr : std::memchr(bytes_.data() + offset_, '\0', remaining());
  if (nul == nullptr) Fail(offset_, std::string(field) + ": string without its NUL");
  std::size_t length = static_cast<const char*>(nul) - (bytes_.data() + offset_);
  std::string value(bytes_.substr(Take(length + 1, field), length));
  return value;
}

std::string_view PgoutputReader::Bytes(std::size_t count, const char* field) {
  return bytes_.substr(Take(count, field), count);
}

Tuple PgoutputReader::TupleData() {
  std::size_t at = offset_;
  std::int16_t columns = Int16("tuple column count");
  if (columns < 0) Fail(at, "negative tuple column count " + std::to_string(columns));
  // Each column takes at least its kind byte: a count larger than what is
  // left is malformed, and must not size the vector.
  if (static_cast<std::size_t>(columns) > remaining()) {
    Fail(at, "tuple of " + std::to_string(columns) + " columns in " +
                 std::to_string(remaining()) + " bytes");
  }
  Tuple tuple(static_cast<std::size_t>(columns));
  for (TupleValue& value : tuple) {
    std::size_t kind_at = offset_;
    char kind = static_cast<char>(Byte("column kind"));
    switch (kind) {
      case 'n':
      case 'u':
        value.kind = static_cast<TupleValue::Kind>(kind);
        break;
      case 't':
      case 'b': {
        value.kind = static_cast<TupleValue::Kind>(kind);
        std::size_t length_at = offset_;
        std::int32_t length = Int32("column length");
        if (length < 0) Fail(length_at, "negative column length " + std::to_string(length));
        value.data = Bytes(static_cast<std::size_t>(length), "column value");
        break;
      }
      default:
        Fail(kind_at, "unknown column kind " + DescribeByte(static_cast<unsigned char>(kind)));
    }
  }
  return tuple;
}

void PgoutputReader::ExpectEnd() {
  if (remaining() != 0) Fail(offset_, std::to_string(remaining()) + " bytes after the message");
}

}  // namespace seatwatch::changes
