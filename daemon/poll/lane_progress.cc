#include "poll/lane_progress.h"

#include <algorithm>

namespace seatwatch::poll {

LaneProgress::LaneProgress(std::vector<std::string> lane_names) {
  auto now = Clock::now();
  for (auto& name : lane_names) lanes_.push_back(Lane{std::move(name), now, false});
}

void LaneProgress::SetStampPeriod(Clock::duration period) {
  std::lock_guard<std::mutex> lock(mutex_);
  stamp_period_ = std::max<Clock::duration>(period, std::chrono::milliseconds(1));
}

LaneProgress::Clock::duration LaneProgress::stamp_period() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stamp_period_;
}

void LaneProgress::OnAllPublished(std::function<void()> callback) {
  std::lock_guard<std::mutex> lock(mutex_);
  on_all_published_ = std::move(callback);
}

void LaneProgress::Stamp(std::size_t lane) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (lane < lanes_.size()) lanes_[lane].stamped = Clock::now();
}

void LaneProgress::MarkPublished(std::size_t lane) {
  std::function<void()> callback;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (lane >= lanes_.size() || lanes_[lane].published) return;
    lanes_[lane].published = true;
    if (all_published_) return;
    all_published_ = std::all_of(lanes_.begin(), lanes_.end(),
                                 [](const Lane& entry) { return entry.published; });
    if (all_published_) callback = on_all_published_;
  }
  // Outside the lock: the callback may take its time (a datagram to
  // systemd) and must not hold up the other lane's stamps.
  if (callback) callback();
}

bool LaneProgress::all_published() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return all_published_;
}

std::optional<LaneProgress::Stall> LaneProgress::FindStall(Clock::duration max_age,
                                                           Clock::time_point now) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& entry : lanes_) {
    if (now - entry.stamped > max_age) return Stall{entry.name, now - entry.stamped};
  }
  return std::nullopt;
}

}  // namespace seatwatch::poll
