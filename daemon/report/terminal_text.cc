#include "report/terminal_text.h"

#include "util/utf8.h"

namespace seatwatch::report {

namespace {

std::string Escape(std::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    auto byte = static_cast<unsigned char>(text[i]);
    if (byte >= 0x20 && byte < 0x7f) {
      out += text[i++];
      continue;
    }
    if (byte < 0x80) {
      if (byte == '\n' && keep_newlines) {
        out += '\n';
      } else if (byte == '\n') {
        out += "\\n";
      } else if (byte == '\r') {
        out += "\\r";
      } else if (byte == '\t') {
        out += "\\t";
      } else {
        util::AppendHexBytes(out, text.substr(i, 1));
      }
      ++i;
      continue;
    }
    size_t length = util::Utf8SequenceLength(text, i);
    // U+0080..U+009F, the C1 controls, are C2 80..C2 9F in UTF-8.
    bool c1 = length == 2 && byte == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0;
    if (length == 0 || c1 || util::IsBidiControl(text, i, length)) {
      size_t n = length == 0 ? 1 : length;
      util::AppendHexBytes(out, text.substr(i, n));
      i += n;
      continue;
    }
    out.append(text.substr(i, length));
    i += length;
  }
  return out;
}

}  // namespace

std::string TerminalSafe(std::string_view text) { return Escape(text, false); }

std::string TerminalSafeLines(std::string_view text) { return Escape(text, true); }

}  // namespace seatwatch::report
