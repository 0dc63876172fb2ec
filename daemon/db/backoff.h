#pragma once

#include <chrono>

namespace seatwatch::db {

// Capped exponential backoff for reconnects: 250ms, 500ms, 1s ... up to the
// cap, with no jitter below 250ms. Not thread-safe; one per session.
class Backoff {
 public:
  using Millis = std::chrono::milliseconds;
  explicit Backoff(Millis cap, Millis initial = Millis(250)) : cap_(cap), initial_(initial) {}

  // The wait before the next attempt; each call doubles the following one.
  Millis Next();
  void Reset() { attempts_ = 0; }
  int attempts() const { return attempts_; }

 private:
  Millis cap_;
  Millis initial_;
  int attempts_ = 0;
};

}  // namespace seatwatch::db
