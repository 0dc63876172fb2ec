#include "cleanup/stop_signal.h"

namespace seatwatch::cleanup {

void StopSignal::Request() {
  std::lock_guard<std::mutex> lock(mutex_);
  requested_ = true;
  wake_.notify_all();
}

bool StopSignal::requested() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return requested_;
}

bool StopSignal::WaitFor(std::chrono::milliseconds wait) {
  std::unique_lock<std::mutex> lock(mutex_);
  return wake_.wait_for(lock, wait, [this] { return requested_; });
}

}  // namespace seatwatch::cleanup
