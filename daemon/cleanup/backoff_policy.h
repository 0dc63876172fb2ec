#pragma once

#include <chrono>

namespace seatwatch::cleanup {

// When the next cleanup run starts. After a clean run (and for an instance
// that is not the leader) one interval later. After a run that ended in a
// lock timeout, a serialization failure or any other error, the wait doubles
// with each failed run in a row: 2, 4, 8 ... intervals, capped at 32
// intervals or 10 minutes, whichever is less, but never below one interval.
// A failing cleanup therefore never retries in a tight loop, and a cleanup
// that keeps meeting busy rows steps out of the buyers' way. Pure; not
// thread-safe.
class BackoffPolicy {
 public:
  using Millis = std::chrono::milliseconds;

  explicit BackoffPolicy(Millis interval) : interval_(interval) {}

  // Records how the last run ended and returns the wait before the next.
  Millis Next(bool failed);
  int failures() const { return failures_; }

  // The wait after `failures` failed runs in a row (0: the plain interval).
  static Millis Delay(Millis interval, int failures);

 private:
  Millis interval_;
  int failures_ = 0;
};

}  // namespace seatwatch::cleanup
