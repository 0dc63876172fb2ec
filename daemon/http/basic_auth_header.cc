#include "http/basic_auth_header.h"

#include <openssl/evp.h>

#include <cctype>

namespace seatwatch::http {

namespace {

// A header of a few KiB at most reaches us (CivetWeb's buffer); a password
// longer than this is not one anybody typed.
constexpr size_t kMaxTokenLength = 4096;

bool IsBase64(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '/';
}

std::optional<std::string> DecodeBase64(std::string_view token) {
  if (token.empty() || token.size() % 4 != 0 || token.size() > kMaxTokenLength) return std::nullopt;
  size_t padding = 0;
  if (token.back() == '=') padding = token[token.size() - 2] == '=' ? 2 : 1;
  for (size_t i = 0; i < token.size() - padding; ++i) {
    if (!IsBase64(token[i])) return std::nullopt;
  }
  std::string out(token.size() / 4 * 3, '\0');
  int length = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                               reinterpret_cast<const unsigned char*>(token.data()),
                               static_cast<int>(token.size()));
  if (length < 0 || static_cast<size_t>(length) != out.size()) return std::nullopt;
  // EVP_DecodeBlock counts the padding as zero bytes.
  out.resize(out.size() - padding);
  return out;
}

}  // namespace

std::optional<BasicCredentials> ParseBasicAuthorization(std::string_view value) {
  constexpr std::string_view kScheme = "basic";
  if (value.size() <= kScheme.size()) return std::nullopt;
  for (size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(value[i])) != kScheme[i]) return std::nullopt;
  }
  size_t start = kScheme.size();
  if (value[start] != ' ') return std::nullopt;
  while (start < value.size() && value[start] == ' ') ++start;
  size_t end = value.size();
  while (end > start && value[end - 1] == ' ') --end;
  std::optional<std::string> decoded = DecodeBase64(value.substr(start, end - start));
  if (!decoded) return std::nullopt;
  size_t colon = decoded->find(':');
  if (colon == std::string::npos) return std::nullopt;
  return BasicCredentials{decoded->substr(0, colon), decoded->substr(colon + 1)};
}

}  // namespace seatwatch::http
