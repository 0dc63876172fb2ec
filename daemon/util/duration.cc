#include "util/duration.h"

#include <cctype>
#include <stdexcept>

namespace seatwatch::util {

namespace {

long long UnitMillis(std::string_view unit) {
  if (unit == "ms") return 1;
  if (unit == "s") return 1000;
  if (unit == "m") return 60 * 1000;
  if (unit == "h") return 60 * 60 * 1000;
  return 0;
}

// The text as errors quote it: a pasted blob must not become a huge log
// line, nor a control character reach a terminal raw.
std::string Quoted(std::string_view text) {
  constexpr size_t kShown = 64;
  std::string out = "\"";
  for (char c : text.substr(0, kShown)) {
    auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[byte >> 4];
      out += hex[byte & 0xf];
    } else {
      out += c;
    }
  }
  if (text.size() <= kShown) return out + "\"";
  return out + "...\" (" + std::to_string(text.size()) + " characters)";
}

[[noreturn]] void TooLarge(std::string_view text) {
  throw std::invalid_argument("duration " + Quoted(text) + " is too large (at most " +
                              FormatDuration(kMaxDuration) + ")");
}

}  // namespace

Millis ParseDuration(std::string_view text) {
  if (text.empty()) throw std::invalid_argument("empty duration");
  const long long max = kMaxDuration.count();
  long long total = 0;
  size_t i = 0;
  while (i < text.size()) {
    size_t digits_start = i;
    long long number = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      // max * 10 + 9 fits easily in a long long: no step can overflow.
      number = number * 10 + (text[i] - '0');
      if (number > max) TooLarge(text);
      ++i;
    }
    if (i == digits_start) {
      throw std::invalid_argument("duration " + Quoted(text) +
                                  " must be a number with a unit (ms, s, m, h), e.g. \"5s\"");
    }
    size_t unit_start = i;
    while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
    long long unit = UnitMillis(text.substr(unit_start, i - unit_start));
    if (unit == 0) {
      throw std::invalid_argument("duration " + Quoted(text) + " needs a unit of ms, s, m or h");
    }
    // Checked before computing: number * unit and total + part stay <= max.
    if (number > max / unit) TooLarge(text);
    long long part = number * unit;
    if (part > max - total) TooLarge(text);
    total += part;
  }
  return Millis(total);
}

std::string FormatDuration(Millis value) {
  long long ms = value.count();
  if (ms != 0 && ms % (60 * 60 * 1000) == 0) return std::to_string(ms / (60 * 60 * 1000)) + "h";
  if (ms != 0 && ms % (60 * 1000) == 0) return std::to_string(ms / (60 * 1000)) + "m";
  if (ms != 0 && ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

double ToSeconds(Millis value) { return static_cast<double>(value.count()) / 1000.0; }

}  // namespace seatwatch::util
