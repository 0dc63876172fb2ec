#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace seatwatch::http {

// Checks Basic credentials against a table of users and bcrypt hashes.
//
// A bcrypt at cost 10 takes tens of milliseconds: a scrape must not pay it
// every time, so a credential that verified is remembered as a keyed digest
// (HMAC-SHA256 of the password with a random per-process key, never the
// password itself) and later requests compare digests in constant time.
// Failures are never remembered, so a wrong password costs a bcrypt every
// time; bcrypts run one at a time, so a flood of wrong passwords holds one
// core, not all of them (scrapers with a remembered credential do not wait).
// An unknown user costs one bcrypt against a dummy hash of the same cost, so
// timing does not tell which users exist.
//
// Thread-safe. SetUsers replaces the table and forgets every remembered
// credential (a password changed on reload stops working at once).
class BasicAuth {
 public:
  // users: name -> bcrypt hash, as the config parser validated them; none:
  // authentication is off (enabled() is false) until SetUsers names some.
  explicit BasicAuth(const std::map<std::string, std::string>& users);
  ~BasicAuth();
  BasicAuth(const BasicAuth&) = delete;
  BasicAuth& operator=(const BasicAuth&) = delete;

  void SetUsers(const std::map<std::string, std::string>& users);
  bool enabled() const;
  bool Verify(std::string_view user, std::string_view password);

  // bcrypt computations so far, the dummy hashes included (for tests: a
  // remembered credential costs none).
  uint64_t bcrypt_runs() const { return bcrypt_runs_.load(); }

 private:
  struct Table;
  std::shared_ptr<Table> Current() const;
  std::string Digest(std::string_view password) const;
  bool RunBcrypt(std::string_view password, const std::string& hash);

  std::array<unsigned char, 32> key_{};
  mutable std::mutex mutex_;
  std::shared_ptr<Table> table_;
  std::mutex bcrypt_mutex_;
  std::atomic<uint64_t> bcrypt_runs_{0};
};

}  // namespace seatwatch::http
