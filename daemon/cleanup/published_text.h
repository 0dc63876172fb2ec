#pragma once

#include <memory>
#include <mutex>
#include <string>

namespace seatwatch::cleanup {

// The cleanup's latest rendered metrics, handed from the worker thread to the
// HTTP threads: the writer publishes a new immutable text, readers copy the
// pointer under the lock and serialize outside it. Thread-safe.
class PublishedText {
 public:
  void Publish(std::string text);
  std::shared_ptr<const std::string> Current() const;

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const std::string> text_ = std::make_shared<const std::string>();
};

}  // namespace seatwatch::cleanup
