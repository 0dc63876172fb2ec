#include "cleanup/published_text.h"

namespace seatwatch::cleanup {

void PublishedText::Publish(std::string text) {
  auto fresh = std::make_shared<const std::string>(std::move(text));
  std::lock_guard<std::mutex> lock(mutex_);
  text_ = std::move(fresh);
}

std::shared_ptr<const std::string> PublishedText::Current() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return text_;
}

}  // namespace seatwatch::cleanup
