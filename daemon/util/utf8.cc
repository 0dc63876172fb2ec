#include "util/utf8.h"

namespace seatwatch::util {

namespace {

constexpr std::string_view kReplacement = "\xef\xbf\xbd";  // U+FFFD

bool Continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

}  // namespace

size_t Utf8SequenceLength(std::string_view text, size_t i) {
  auto at = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char lead = at(i);
  if (lead < 0x80) return 1;
  size_t length;
  // The second byte's range depends on the lead (Unicode, table 3-7): this
  // rules out overlong forms, surrogates and code points above U+10FFFF.
  unsigned char low = 0x80;
  unsigned char high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  if (at(i + 1) < low || at(i + 1) > high) return 0;
  for (size_t k = 2; k < length; ++k) {
    if (!Continuation(at(i + k))) return 0;
  }
  return length;
}

bool IsValidUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    size_t length = Utf8SequenceLength(text, i);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

void AppendValidUtf8(std::string& out, std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    // Runs of ASCII are the common case: copy them in one go.
    size_t start = i;
    while (i < text.size() && static_cast<unsigned char>(text[i]) < 0x80) ++i;
    out.append(text.substr(start, i - start));
    if (i == text.size()) break;
    size_t length = Utf8SequenceLength(text, i);
    if (length == 0) {
      out.append(kReplacement);
      ++i;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
}

std::string ValidUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  AppendValidUtf8(out, text);
  return out;
}

size_t Utf8Prefix(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text.size();
  size_t cut = max_bytes;
  // Step back over continuation bytes to the start of the character that
  // would be split (at most three of them in well-formed text).
  for (int back = 0; back < 3 && cut > 0 && Continuation(static_cast<unsigned char>(text[cut]));
       ++back) {
    --cut;
  }
  return cut;
}

bool IsBidiControl(std::string_view text, size_t i, size_t length) {
  auto at = [&](size_t k) { return static_cast<unsigned char>(text[i + k]); };
  if (length == 2) return at(0) == 0xD8 && at(1) == 0x9C;  // U+061C
  if (length != 3 || at(0) != 0xE2) return false;
  unsigned char second = at(1);
  unsigned char third = at(2);
  if (second == 0x80) {
    return third == 0x8E || third == 0x8F ||      // U+200E, U+200F
           (third >= 0xAA && third <= 0xAE);      // U+202A..U+202E
  }
  return second == 0x81 && third >= 0xA6 && third <= 0xA9;  // U+2066..U+2069
}

void AppendHexBytes(std::string& out, std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  for (char c : bytes) {
    auto byte = static_cast<unsigned char>(c);
    out += "\\x";
    out += kDigits[byte >> 4];
    out += kDigits[byte & 0xf];
  }
}

}  // namespace seatwatch::util
