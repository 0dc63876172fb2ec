#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace seatwatch::http {

struct BasicCredentials {
  std::string user;
  std::string password;
};

// The user and password of an `Authorization: Basic <base64>` header value
// (RFC 7617): the scheme in any case, the token strict base64 with its
// padding, the user up to the first colon. nullopt for another scheme or a
// malformed token. Pure.
std::optional<BasicCredentials> ParseBasicAuthorization(std::string_view value);

// The challenge of a 401: `Basic realm="seatwatch", charset="UTF-8"`.
constexpr const char* kBasicChallenge = "Basic realm=\"seatwatch\", charset=\"UTF-8\"";

}  // namespace seatwatch::http
