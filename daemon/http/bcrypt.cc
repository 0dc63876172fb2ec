#include "http/bcrypt.h"

#include <crypt.h>
#include <openssl/crypto.h>

#include <memory>
#include <stdexcept>

namespace seatwatch::http {

namespace {

// "$2y$10$" + 22 characters of salt + 31 of hash.
constexpr size_t kPrefixLength = 7;
constexpr size_t kHashLength = kPrefixLength + 53;

bool IsBcryptBase64(char c) {
  return c == '.' || c == '/' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
         (c >= '0' && c <= '9');
}

// struct crypt_data is 32 KiB: on the heap, not on a CivetWeb worker's stack.
std::unique_ptr<crypt_data> NewCryptData() {
  auto data = std::make_unique<crypt_data>();
  data->initialized = 0;
  return data;
}

}  // namespace

std::string BcryptProblem(std::string_view hash) {
  const std::string kExample = " (e.g. the output of htpasswd -nBC 10 USER, after the colon)";
  if (hash.size() < 4 || hash[0] != '$' || hash[1] != '2' || hash[3] != '$' ||
      (hash[2] != 'y' && hash[2] != 'b' && hash[2] != 'a')) {
    return "is not a bcrypt hash: it must start with $2y$, $2b$ or $2a$" + kExample;
  }
  if (hash.size() != kHashLength) {
    return "is not a bcrypt hash: it must be " + std::to_string(kHashLength) + " characters long (got " +
           std::to_string(hash.size()) + ")" + kExample;
  }
  bool digits = hash[4] >= '0' && hash[4] <= '9' && hash[5] >= '0' && hash[5] <= '9' && hash[6] == '$';
  int cost = digits ? (hash[4] - '0') * 10 + (hash[5] - '0') : 0;
  if (!digits || cost < 4 || cost > 31) {
    return "is not a bcrypt hash: the cost after the prefix must be two digits from 04 to 31";
  }
  for (size_t i = kPrefixLength; i < hash.size(); ++i) {
    if (!IsBcryptBase64(hash[i])) {
      return "is not a bcrypt hash: character " + std::to_string(i + 1) +
             " is not one of bcrypt's ./A-Za-z0-9";
    }
  }
  return "";
}

int BcryptCost(std::string_view hash) { return (hash[4] - '0') * 10 + (hash[5] - '0'); }

bool BcryptMatches(std::string_view password, const std::string& hash) {
  if (password.find('\0') != std::string_view::npos) return false;
  std::string phrase(password);
  auto data = NewCryptData();
  const char* result = crypt_rn(phrase.c_str(), hash.c_str(), data.get(), sizeof *data);
  if (!result || result[0] == '*') return false;
  bool same = EqualInConstantTime(result, hash);
  OPENSSL_cleanse(data.get(), sizeof *data);
  OPENSSL_cleanse(phrase.data(), phrase.size());
  return same;
}

std::string BcryptHash(std::string_view password, int cost) {
  if (password.find('\0') != std::string_view::npos) {
    throw std::runtime_error("a bcrypt password cannot hold a NUL");
  }
  char setting[CRYPT_GENSALT_OUTPUT_SIZE];
  // No random bytes given: libxcrypt takes them from the system's source.
  if (!crypt_gensalt_rn("$2b$", static_cast<unsigned long>(cost), nullptr, 0, setting, sizeof setting)) {
    throw std::runtime_error("crypt_gensalt_rn cannot make a bcrypt salt");
  }
  std::string phrase(password);
  auto data = NewCryptData();
  const char* result = crypt_rn(phrase.c_str(), setting, data.get(), sizeof *data);
  if (!result || result[0] == '*') throw std::runtime_error("crypt_rn cannot hash with bcrypt");
  std::string hash(result);
  OPENSSL_cleanse(data.get(), sizeof *data);
  OPENSSL_cleanse(phrase.data(), phrase.size());
  return hash;
}

bool EqualInConstantTime(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  if (a.empty()) return true;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace seatwatch::http
