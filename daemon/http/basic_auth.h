#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "http/bcrypt_queue.h"

namespace seatwatch::http {

// What Basic credentials earn: served, a 401, or (kBusy) a 503 because too
// many credentials not yet remembered are being checked already.
enum class AuthVerdict { kAllowed, kDenied, kBusy };

// Checks Basic credentials against a table of users and bcrypt hashes.
//
// A bcrypt at cost 10 takes tens of milliseconds: a scrape must not pay it
// every time, so a credential that verified is remembered as a keyed digest
// (HMAC-SHA256 of the password with a random per-process key, never the
// password itself) and later requests compare digests in constant time,
// without waiting for any bcrypt. Failures are never remembered, so a wrong
// password costs a bcrypt every time; bcrypts run one at a time and at most
// kBcryptQueueCapacity wait or run (BcryptQueue), so a flood of wrong
// passwords holds one core and cannot make a scraper wait behind it: one
// more is answered kBusy at once.
//
// Timing tells nothing of which users exist: an unknown user costs a bcrypt
// against a dummy hash as dear as the dearest configured one, and every
// failure takes at least as long as a bcrypt at that cost (measured when
// the users are set, then from each such bcrypt), so that a wrong password
// for a user with a cheaper hash is not told apart either.
//
// Thread-safe. SetUsers replaces the table; a remembered credential is kept
// only while its user keeps the same hash (a password changed on reload
// stops working at once, a routine reload makes no scraper pay a bcrypt).
class BasicAuth {
 public:
  static constexpr int kBcryptQueueCapacity = 4;

  // users: name -> bcrypt hash, as the config parser validated them; none:
  // authentication is off (enabled() is false) until SetUsers names some.
  explicit BasicAuth(const std::map<std::string, std::string>& users);
  ~BasicAuth();
  BasicAuth(const BasicAuth&) = delete;
  BasicAuth& operator=(const BasicAuth&) = delete;

  void SetUsers(const std::map<std::string, std::string>& users);
  bool enabled() const;
  AuthVerdict Check(std::string_view user, std::string_view password);
  // Check(...) == kAllowed.
  bool Verify(std::string_view user, std::string_view password);

  // bcrypt computations so far, the dummy hashes' included (for tests: a
  // remembered credential costs none), checks answered kBusy, and bcrypts
  // waiting or running now.
  uint64_t bcrypt_runs() const { return queue_.runs(); }
  uint64_t busy_refusals() const { return queue_.refused(); }
  uint64_t bcrypts_queued() const { return queue_.size(); }
  // How long a failed check takes at least (a bcrypt at the dearest cost).
  std::chrono::nanoseconds failure_time() const;

 private:
  struct Table;
  std::shared_ptr<Table> Current() const;
  std::string Digest(std::string_view password) const;

  std::array<unsigned char, 32> key_{};
  mutable std::mutex mutex_;
  std::shared_ptr<Table> table_;
  BcryptQueue queue_{kBcryptQueueCapacity};
};

}  // namespace seatwatch::http
