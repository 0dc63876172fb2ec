#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace seatwatch::cleanup {

// A stop request that a sleeping thread wakes up for. Thread-safe: Request()
// from any thread, requested() and WaitFor() from the worker.
class StopSignal {
 public:
  void Request();
  bool requested() const;
  // Sleeps up to `wait`; returns true as soon as a stop is (or was) requested.
  bool WaitFor(std::chrono::milliseconds wait);

 private:
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool requested_ = false;
};

}  // namespace seatwatch::cleanup
