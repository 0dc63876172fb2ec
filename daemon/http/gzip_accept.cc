#include "http/gzip_accept.h"

#include <cctype>
#include <optional>
#include <string>

namespace seatwatch::http {

namespace {

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ); only whether
// it is above zero matters here.
std::optional<bool> PositiveQ(std::string_view q) {
  if (q.empty() || (q[0] != '0' && q[0] != '1')) return std::nullopt;
  bool positive = q[0] == '1';
  if (q.size() == 1) return positive;
  if (q[1] != '.' || q.size() > 5) return std::nullopt;
  for (char c : q.substr(2)) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    if (positive && c != '0') return std::nullopt;  // above 1
    if (c != '0') positive = true;
  }
  return positive;
}

}  // namespace

bool AcceptsGzip(std::string_view accept_encoding) {
  std::optional<bool> gzip, star;
  while (!accept_encoding.empty()) {
    auto comma = accept_encoding.find(',');
    std::string_view element = accept_encoding.substr(0, comma);
    accept_encoding =
        comma == std::string_view::npos ? std::string_view() : accept_encoding.substr(comma + 1);
    auto semicolon = element.find(';');
    std::string coding = Lower(Trim(element.substr(0, semicolon)));
    std::optional<bool> accepted = true;
    while (semicolon != std::string_view::npos) {
      element = element.substr(semicolon + 1);
      semicolon = element.find(';');
      std::string_view param = Trim(element.substr(0, semicolon));
      auto equals = param.find('=');
      if (equals == std::string_view::npos) continue;
      if (Lower(Trim(param.substr(0, equals))) == "q") {
        accepted = PositiveQ(Trim(param.substr(equals + 1)));
      }
    }
    if (!accepted) continue;  // unparsable q: ignore the element
    if (coding == "gzip" || coding == "x-gzip") {
      gzip = gzip.value_or(false) || *accepted;
    } else if (coding == "*") {
      star = star.value_or(false) || *accepted;
    }
  }
  if (gzip) return *gzip;
  return star.value_or(false);
}

}  // namespace seatwatch::http
