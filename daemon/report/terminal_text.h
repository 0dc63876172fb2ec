#pragma once

#include <string>
#include <string_view>

namespace seatwatch::report {

// Text from the database (label values, detail rows, error messages, query
// texts) made safe to print on a terminal: an ESC sequence in a row could
// otherwise retitle the window, clear the screen, hide text or move the
// cursor to forge a line of the report. Line feed, carriage return and tab
// are shown as \n, \r and \t; every other control character (C0, DEL, and
// C1 encoded in UTF-8, which some terminals obey), every bidirectional
// control (a right-to-left override reverses what follows it: see
// util::IsBidiControl) and every byte that is not UTF-8 is shown as \xNN.
// Printable UTF-8 is kept.
std::string TerminalSafe(std::string_view text);

// The same, but line feeds are kept: for text that is already laid out in
// lines (the report as a whole).
std::string TerminalSafeLines(std::string_view text);

}  // namespace seatwatch::report
