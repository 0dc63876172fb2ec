#pragma once

#include <string>
#include <string_view>

namespace seatwatch::http {

// bcrypt through the system's libxcrypt (crypt_rn, crypt_gensalt_rn): the
// hashes that Prometheus' web.config.file basic_auth_users and `htpasswd -B`
// write, so they are copied over unchanged. Every function is thread-safe
// (each call has its own crypt_data).

// Why `hash` is not a bcrypt hash, or "" if it is: "$2y$", "$2b$" or "$2a$",
// a two-digit cost from 04 to 31, "$", then 53 characters of bcrypt's
// base64 (22 of salt, 31 of hash). Pure; the config parser uses it.
std::string BcryptProblem(std::string_view hash);

// The cost of a hash BcryptProblem accepts (2^cost rounds).
int BcryptCost(std::string_view hash);

// Whether `password` hashes to `hash`; the final comparison is in constant
// time. False for a password holding a NUL (crypt reads a C string, so it
// would be cut short there) and for anything crypt_rn refuses.
bool BcryptMatches(std::string_view password, const std::string& hash);

// A new "$2b$" hash of `password` with a random salt; throws
// std::runtime_error if libxcrypt cannot make one.
std::string BcryptHash(std::string_view password, int cost);

// a == b without an early exit on the first different byte (the lengths are
// not secret here: both sides are digests or hashes of fixed length).
bool EqualInConstantTime(std::string_view a, std::string_view b);

}  // namespace seatwatch::http
