#pragma once

#include <string>
#include <string_view>

namespace seatwatch::metrics {

// Escaping of the Prometheus text format (exposition formats, "Text format
// details"), for text that comes from the config or the database.
//
// HELP: backslash as \\ and line feed as \n. Unescaped, a help over two
// lines ends the comment at the first line and makes the rest a malformed
// sample line, and Prometheus refuses the whole scrape.
void AppendEscapedHelp(std::string& out, std::string_view help);
std::string EscapedHelp(std::string_view help);

// A label value: backslash, double quote and line feed escaped. Other
// control characters are valid as they are inside the quotes. Both also
// replace bytes that are not UTF-8 by U+FFFD: Prometheus refuses a scrape
// with an invalid label value.
void AppendEscapedLabelValue(std::string& out, std::string_view value);

}  // namespace seatwatch::metrics
