#include "page/html_escape.h"

#include "util/utf8.h"

namespace seatwatch::page {

void AppendHtmlEscaped(std::string& out, std::string_view text) {
  out.reserve(out.size() + text.size());
  size_t i = 0;
  while (i < text.size()) {
    size_t length = util::Utf8SequenceLength(text, i);
    if (length == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
      continue;
    }
    if (length > 1 && util::IsBidiControl(text, i, length)) {
      util::AppendHexBytes(out, text.substr(i, length));
      i += length;
      continue;
    }
    if (length > 1) {
      out.append(text.substr(i, length));
      i += length;
      continue;
    }
    unsigned char c = static_cast<unsigned char>(text[i++]);
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      case '\t':
      case '\n':
        out += static_cast<char>(c);
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          util::AppendHexBytes(out, text.substr(i - 1, 1));
        } else {
          out += static_cast<char>(c);
        }
    }
  }
}

std::string HtmlEscape(std::string_view text) {
  std::string out;
  AppendHtmlEscaped(out, text);
  return out;
}

}  // namespace seatwatch::page
