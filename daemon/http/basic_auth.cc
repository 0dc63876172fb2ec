#include "http/basic_auth.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <algorithm>
#include <stdexcept>

#include "http/bcrypt.h"

namespace seatwatch::http {

// One generation of users. Its cache holds only credentials that verified
// against these hashes, at most one per user; a reload makes a new Table, so
// a verification that finishes after it lands in the old one, unseen.
struct BasicAuth::Table {
  std::map<std::string, std::string> users;
  std::string dummy_hash;  // an unknown user is checked against this
  std::mutex cache_mutex;
  std::map<std::string, std::string, std::less<>> cache;  // user -> digest
};

namespace {

std::string RandomText(size_t bytes) {
  std::string out(bytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(bytes)) != 1) {
    throw std::runtime_error("no random bytes from OpenSSL");
  }
  return out;
}

}  // namespace

BasicAuth::BasicAuth(const std::map<std::string, std::string>& users) {
  if (RAND_bytes(key_.data(), static_cast<int>(key_.size())) != 1) {
    throw std::runtime_error("no random bytes from OpenSSL for the credential cache key");
  }
  SetUsers(users);
}

BasicAuth::~BasicAuth() { OPENSSL_cleanse(key_.data(), key_.size()); }

void BasicAuth::SetUsers(const std::map<std::string, std::string>& users) {
  auto table = std::make_shared<Table>();
  table->users = users;
  if (!users.empty()) {
    // As dear as the dearest real hash, and of a random password, so that it
    // never matches anything presented.
    int cost = 4;
    for (const auto& [name, hash] : users) cost = std::max(cost, BcryptCost(hash));
    std::string password;
    for (char c : RandomText(24)) password += "0123456789abcdef"[static_cast<unsigned char>(c) % 16];
    table->dummy_hash = BcryptHash(password, cost);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  table_ = std::move(table);
}

std::shared_ptr<BasicAuth::Table> BasicAuth::Current() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return table_;
}

std::string BasicAuth::Digest(std::string_view password) const {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (!HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()),
            reinterpret_cast<const unsigned char*>(password.data()), password.size(), out, &length)) {
    throw std::runtime_error("HMAC-SHA256 failed");
  }
  return std::string(reinterpret_cast<const char*>(out), length);
}

bool BasicAuth::RunBcrypt(std::string_view password, const std::string& hash) {
  std::lock_guard<std::mutex> lock(bcrypt_mutex_);
  ++bcrypt_runs_;
  return BcryptMatches(password, hash);
}

bool BasicAuth::enabled() const { return !Current()->users.empty(); }

bool BasicAuth::Verify(std::string_view user, std::string_view password) {
  std::shared_ptr<Table> table = Current();
  if (table->users.empty()) return false;
  auto found = table->users.find(std::string(user));
  if (found == table->users.end()) {
    RunBcrypt(password, table->dummy_hash);
    return false;
  }
  std::string digest = Digest(password);
  {
    std::lock_guard<std::mutex> lock(table->cache_mutex);
    auto cached = table->cache.find(user);
    if (cached != table->cache.end() && EqualInConstantTime(cached->second, digest)) return true;
  }
  if (!RunBcrypt(password, found->second)) return false;
  std::lock_guard<std::mutex> lock(table->cache_mutex);
  table->cache[found->first] = digest;
  return true;
}

}  // namespace seatwatch::http
