#pragma once

// The captured pgoutput messages of tests/unit/data/pgoutput/ (made by its
// capture.sh) and a builder for hand-made ones. Header-only: shared by the
// parser, decoder and fuzz seed tests.

#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "changes/bytea_text.h"
#include "support/test_env.h"

namespace seatwatch::testing {

// One row of pg_logical_slot_get_binary_changes: its lsn and xid columns and
// the message (the data column, decoded from its bytea text).
struct CapturedMessage {
  std::uint64_t lsn = 0;
  std::uint32_t xid = 0;
  std::string bytes;
};

inline std::uint64_t ParseLsn(const std::string& text) {
  std::size_t slash = text.find('/');
  return std::strtoull(text.substr(0, slash).c_str(), nullptr, 16) << 32 |
         std::strtoull(text.substr(slash + 1).c_str(), nullptr, 16);
}

inline std::string CaptureDir() { return SourceDir() + "/tests/unit/data/pgoutput"; }

// NAME.txt: "LSN<TAB>XID<TAB>\x..." lines.
inline std::vector<CapturedMessage> LoadCapture(const std::string& name) {
  std::istringstream lines(ReadFile(CaptureDir() + "/" + name + ".txt"));
  std::vector<CapturedMessage> messages;
  std::string line;
  while (std::getline(lines, line)) {
    std::size_t tab1 = line.find('\t');
    std::size_t tab2 = line.find('\t', tab1 + 1);
    CapturedMessage m;
    m.lsn = ParseLsn(line.substr(0, tab1));
    m.xid = static_cast<std::uint32_t>(std::stoul(line.substr(tab1 + 1, tab2 - tab1 - 1)));
    m.bytes = changes::DecodeByteaText(std::string_view(line).substr(tab2 + 1));
    messages.push_back(std::move(m));
  }
  return messages;
}

inline const std::vector<std::string>& CaptureNames() {
  static const std::vector<std::string> kNames = {
      "insert",   "update",  "delete",    "delete_default", "identity_full",
      "truncate", "big_row", "unwatched", "messages",       "origin"};
  return kNames;
}

// Hand-made messages, in network byte order.
class MessageBuilder {
 public:
  explicit MessageBuilder(char type) { bytes_ += type; }
  MessageBuilder& Byte(char c) { bytes_ += c; return *this; }
  MessageBuilder& Int16(std::int16_t v) { return Big(static_cast<std::uint16_t>(v), 2); }
  MessageBuilder& Int32(std::int32_t v) { return Big(static_cast<std::uint32_t>(v), 4); }
  MessageBuilder& Int64(std::int64_t v) { return Big(static_cast<std::uint64_t>(v), 8); }
  MessageBuilder& String(std::string_view s) { bytes_.append(s); bytes_ += '\0'; return *this; }
  MessageBuilder& Text(std::string_view s) {
    Byte('t').Int32(static_cast<std::int32_t>(s.size()));
    bytes_.append(s);
    return *this;
  }
  const std::string& bytes() const { return bytes_; }

 private:
  MessageBuilder& Big(std::uint64_t v, int width) {
    for (int i = width - 1; i >= 0; --i) bytes_ += static_cast<char>((v >> (8 * i)) & 0xff);
    return *this;
  }
  std::string bytes_;
};

}  // namespace seatwatch::testing
