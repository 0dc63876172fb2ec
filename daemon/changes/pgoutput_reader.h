#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "changes/pgoutput_messages.h"

namespace seatwatch::changes {

// Reads the fields of one pgoutput message front to back, in network byte
// order. Every read is checked against the bytes left; a length or count
// read from the message is checked against them before anything is
// allocated for it. Any failure throws PgoutputError naming the message
// type and the offset of the field that could not be read. Not thread-safe;
// a view of the bytes, which must outlive it and every view it returns.
class PgoutputReader {
 public:
  PgoutputReader(std::string_view bytes, const char* message_name)
      : bytes_(bytes), message_name_(message_name) {}

  std::uint8_t Byte(const char* field);
  std::int16_t Int16(const char* field);
  std::int32_t Int32(const char* field);
  std::uint32_t UInt32(const char* field) { return static_cast<std::uint32_t>(Int32(field)); }
  std::int64_t Int64(const char* field);
  std::uint64_t UInt64(const char* field) { return static_cast<std::uint64_t>(Int64(field)); }
  // A NUL-terminated string (the NUL is consumed, not returned).
  std::string String(const char* field);
  std::string_view Bytes(std::size_t count, const char* field);
  // TupleData: Int16 column count, then per column 'n', 'u', or 't'/'b' with
  // an Int32 length and that many bytes.
  Tuple TupleData();

  std::size_t offset() const { return offset_; }
  std::size_t remaining() const { return bytes_.size() - offset_; }
  // Throws unless every byte was read: trailing bytes mean the message was
  // not what its type byte said (or a protocol version this does not read).
  void ExpectEnd();
  [[noreturn]] void Fail(std::size_t at, const std::string& why) const;
  // "0x4b 'K'": a byte for an error message, printable or not.
  static std::string DescribeByte(unsigned char byte);

 private:
  // Checks that `count` bytes are left for `field`, returns where they start.
  std::size_t Take(std::size_t count, const char* field);

  std::string_view bytes_;
  const char* message_name_;
  std::size_t offset_ = 0;
};

}  // namespace seatwatch::changes
