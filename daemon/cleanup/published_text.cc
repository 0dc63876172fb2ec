#include "cleanup/published_text.h"

namespace seatwatch::cleanup {

void PublishedText::Publish(std::string text) {
  auto fresh = std::make_shared<const std::string>(std::move(text));
  std::lock_guard<std::mutex> lock(mutex_);
  text_ = std::move(fresh);
}

void PublishedText::Publish(const CleanupMetrics& metrics) {
  auto text = std::make_shared<const std::string>(metrics.Render());
  auto status = std::make_shared<const CleanupStatus>(metrics.Status());
  std::lock_guard<std::mutex> lock(mutex_);
  text_ = std::move(text);
  status_ = std::move(status);
}

std::shared_ptr<const std::string> PublishedText::Current() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return text_;
}

std::shared_ptr<const CleanupStatus> PublishedText::Status() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return status_;
}

}  // namespace seatwatch::cleanup
