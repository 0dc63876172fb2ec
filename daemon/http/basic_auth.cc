#include "http/basic_auth.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <thread>

#include "http/bcrypt.h"

namespace seatwatch::http {

// One generation of users. Its cache holds only credentials that verified
// against these hashes, at most one per user; a reload makes a new Table,
// taking over what still holds, so a verification that finishes after it
// lands in the old one, unseen.
struct BasicAuth::Table {
  struct Remembered {
    std::string hash;    // the user's hash it verified against
    std::string digest;  // of the password
  };
  std::map<std::string, std::string> users;
  int max_cost = 0;
  std::string dummy_hash;  // an unknown user is checked against this, at max_cost
  // How long a bcrypt at max_cost takes: the least a failure takes.
  std::atomic<int64_t> failure_ns{0};
  std::mutex cache_mutex;
  std::map<std::string, Remembered, std::less<>> cache;  // user -> what verified
};

namespace {

std::string RandomText(size_t bytes) {
  std::string out(bytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(bytes)) != 1) {
    throw std::runtime_error("no random bytes from OpenSSL");
  }
  return out;
}

int64_t Nanoseconds(std::chrono::steady_clock::duration duration) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(duration).count();
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
  std::shared_ptr<Table> old = Current();
  if (!users.empty()) {
    table->max_cost = 4;
    for (const auto& [name, hash] : users) table->max_cost = std::max(table->max_cost, BcryptCost(hash));
    if (old && old->max_cost == table->max_cost) {
      table->dummy_hash = old->dummy_hash;
      table->failure_ns = old->failure_ns.load();
    } else {
      // As dear as the dearest real hash, and of a random password, so that
      // it never matches anything presented. Making it costs what checking
      // it does: the first measure of a failure's time.
      std::string password;
      for (char c : RandomText(24)) password += "0123456789abcdef"[static_cast<unsigned char>(c) % 16];
      auto start = std::chrono::steady_clock::now();
      table->dummy_hash = BcryptHash(password, table->max_cost);
      table->failure_ns = Nanoseconds(std::chrono::steady_clock::now() - start);
    }
  }
  if (old) {
    // What verified against a hash the user still has stays remembered.
    std::lock_guard<std::mutex> lock(old->cache_mutex);
    for (const auto& [name, remembered] : old->cache) {
      auto user = table->users.find(name);
      if (user != table->users.end() && user->second == remembered.hash) {
        table->cache.emplace(name, remembered);
      }
    }
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

bool BasicAuth::enabled() const { return !Current()->users.empty(); }

std::chrono::nanoseconds BasicAuth::failure_time() const {
  return std::chrono::nanoseconds(Current()->failure_ns.load());
}

bool BasicAuth::Verify(std::string_view user, std::string_view password) {
  return Check(user, password) == AuthVerdict::kAllowed;
}

AuthVerdict BasicAuth::Check(std::string_view user, std::string_view password) {
  std::shared_ptr<Table> table = Current();
  if (table->users.empty()) return AuthVerdict::kDenied;
  auto found = table->users.find(std::string(user));
  bool known = found != table->users.end();
  std::string digest = Digest(password);
  if (known) {
    // Remembered: no bcrypt, and no waiting for anyone else's.
    std::lock_guard<std::mutex> lock(table->cache_mutex);
    auto cached = table->cache.find(user);
    if (cached != table->cache.end() && EqualInConstantTime(cached->second.digest, digest)) {
      return AuthVerdict::kAllowed;
    }
  }
  const std::string& hash = known ? found->second : table->dummy_hash;
  auto run = queue_.Matches(password, hash);
  if (!run) return AuthVerdict::kBusy;
  if (BcryptCost(hash) == table->max_cost) {
    // A moving average of what a bcrypt at that cost takes now (the load of
    // the machine changes it), for the failures of cheaper hashes to match.
    int64_t old_ns = table->failure_ns.load();
    table->failure_ns = old_ns + (Nanoseconds(run->took) - old_ns) / 4;
  }
  if (known && run->matches) {
    std::lock_guard<std::mutex> lock(table->cache_mutex);
    table->cache[found->first] = Table::Remembered{found->second, digest};
    return AuthVerdict::kAllowed;
  }
  // A failure lasts as long as a bcrypt at the dearest cost, whatever the
  // user's own cost (or none): timing must not tell users apart. Slept after
  // the turn is passed on, so the queue does not wait for it.
  auto left = std::chrono::nanoseconds(table->failure_ns.load()) - run->took;
  if (left > std::chrono::nanoseconds::zero()) std::this_thread::sleep_for(left);
  return AuthVerdict::kDenied;
}

}  // namespace seatwatch::http
