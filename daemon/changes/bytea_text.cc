#include "changes/bytea_text.h"

#include "changes/pgoutput_error.h"

namespace seatwatch::changes {

namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string DecodeByteaText(std::string_view text) {
  if (text.size() < 2 || text[0] != '\\' || text[1] != 'x') {
    throw PgoutputError("bytea text: not in the hex format (\\x...)");
  }
  std::string_view digits = text.substr(2);
  if (digits.size() % 2 != 0) {
    throw PgoutputError("bytea text: odd number of hex digits (" +
                        std::to_string(digits.size()) + ")");
  }
  std::string bytes(digits.size() / 2, '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    int high = HexValue(digits[2 * i]);
    int low = HexValue(digits[2 * i + 1]);
    if (high < 0 || low < 0) {
      throw PgoutputError("bytea text: not a hex digit at offset " +
                          std::to_string(2 + 2 * i + (high < 0 ? 0 : 1)));
    }
    bytes[i] = static_cast<char>(high << 4 | low);
  }
  return bytes;
}

}  // namespace seatwatch::changes
