#include "metrics/exposition_escape.h"

#include "util/utf8.h"

namespace seatwatch::metrics {

namespace {

void AppendEscaped(std::string& out, std::string_view text, bool quote) {
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c != '\\' && c != '\n' && !(quote && c == '"')) continue;
    util::AppendValidUtf8(out, text.substr(start, i - start));
    out += '\\';
    out += c == '\n' ? 'n' : c;
    start = i + 1;
  }
  util::AppendValidUtf8(out, text.substr(start));
}

}  // namespace

void AppendEscapedHelp(std::string& out, std::string_view help) {
  AppendEscaped(out, help, /*quote=*/false);
}

std::string EscapedHelp(std::string_view help) {
  std::string out;
  out.reserve(help.size());
  AppendEscapedHelp(out, help);
  return out;
}

void AppendEscapedLabelValue(std::string& out, std::string_view value) {
  AppendEscaped(out, value, /*quote=*/true);
}

}  // namespace seatwatch::metrics
