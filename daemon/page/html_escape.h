#pragma once

#include <string>
#include <string_view>

namespace seatwatch::page {

// Text from the database (fan names, keys, detail values, query texts,
// application names, error messages) made safe to place in HTML text or in a
// double- or single-quoted attribute value: & < > " ' become character
// references, so `<script>alert(1)</script>` shows as text and runs nothing.
// Bytes that are not UTF-8 become U+FFFD (a database in SQL_ASCII passes any
// byte through, and the page is served as UTF-8); control characters other
// than tab and line feed, and bidirectional controls (U+202E would reverse
// the text after it: see util::IsBidiControl), are shown as \xNN, as the
// --once report does. Pure.
std::string HtmlEscape(std::string_view text);

// Appends HtmlEscape(text) to `out`.
void AppendHtmlEscaped(std::string& out, std::string_view text);

}  // namespace seatwatch::page
