#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "cleanup/cleanup_metrics.h"
#include "cleanup/cleanup_status.h"

namespace seatwatch::cleanup {

// The cleanup's latest rendered metrics and its status, handed from the
// worker thread to the HTTP threads: the writer publishes a new immutable
// text and status, readers copy the pointers under the lock and serialize
// outside it. Thread-safe.
class PublishedText {
 public:
  // Both at once, so a reader never sees the text of one moment and the
  // status of another.
  void Publish(const CleanupMetrics& metrics);
  void Publish(std::string text);
  std::shared_ptr<const std::string> Current() const;
  std::shared_ptr<const CleanupStatus> Status() const;

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const std::string> text_ = std::make_shared<const std::string>();
  std::shared_ptr<const CleanupStatus> status_ = std::make_shared<const CleanupStatus>();
};

}  // namespace seatwatch::cleanup
