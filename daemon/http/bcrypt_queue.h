#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace seatwatch::http {

// Runs bcrypt verifications one at a time, in the order they arrive, with at
// most `capacity` of them waiting or running: one more is refused at once
// instead of queued. One at a time, a flood of wrong passwords holds one
// core, not all of them; bounded and in order, a scrape with credentials
// not yet remembered waits for at most `capacity` - 1 bcrypts of others, or
// is told at once to come back, never for as long as the flood lasts.
// Thread-safe.
class BcryptQueue {
 public:
  explicit BcryptQueue(int capacity) : capacity_(static_cast<uint64_t>(capacity)) {}
  BcryptQueue(const BcryptQueue&) = delete;
  BcryptQueue& operator=(const BcryptQueue&) = delete;

  struct Result {
    bool matches = false;
    std::chrono::steady_clock::duration took{};  // the bcrypt itself, not the wait for its turn
  };
  // BcryptMatches(password, hash) in its turn; nullopt, at once, when
  // `capacity` verifications are already waiting or running.
  std::optional<Result> Matches(std::string_view password, const std::string& hash);

  // bcrypts run so far, verifications refused because the queue was full,
  // and those waiting or running now.
  uint64_t runs() const;
  uint64_t refused() const;
  uint64_t size() const;

 private:
  const uint64_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable turn_;
  uint64_t next_ticket_ = 0;  // the ticket the next arrival takes
  uint64_t serving_ = 0;      // the ticket whose bcrypt runs now (or next)
  uint64_t runs_ = 0;
  uint64_t refused_ = 0;
};

}  // namespace seatwatch::http
