#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace seatwatch::util {

// The length of the well-formed UTF-8 sequence that starts at text[i]
// (1 to 4), or 0 if the bytes there are not one (a stray continuation byte,
// an overlong form, a surrogate, a sequence cut short, beyond U+10FFFF).
size_t Utf8SequenceLength(std::string_view text, size_t i);

bool IsValidUtf8(std::string_view text);

// Appends `text` with every ill-formed byte replaced by U+FFFD. Prometheus
// refuses a whole scrape with a label value that is not UTF-8, and a JSON
// document with such bytes is not JSON; a database in SQL_ASCII passes any
// byte through.
void AppendValidUtf8(std::string& out, std::string_view text);
std::string ValidUtf8(std::string_view text);

// Whether the well-formed sequence of `length` bytes at text[i] (see
// Utf8SequenceLength) is a bidirectional formatting control: U+061C,
// U+200E, U+200F, U+202A..U+202E, U+2066..U+2069. Shown as it is, a
// right-to-left override in a seat name reverses the text after it, on a
// page as on a terminal, so what the database sends is not what is read.
bool IsBidiControl(std::string_view text, size_t i, size_t length);

// Appends each byte of `bytes` as \xNN (lower-case hex): how every place
// that shows database text (the page, --once, the log) shows what it must
// not pass on as it is.
void AppendHexBytes(std::string& out, std::string_view bytes);

// The longest prefix of `text` of at most `max_bytes` that does not end in
// the middle of a character, for cutting text to a size.
size_t Utf8Prefix(std::string_view text, size_t max_bytes);

}  // namespace seatwatch::util
