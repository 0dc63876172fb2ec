#include "locks/wait_episodes.h"

#include <set>

namespace seatwatch::locks {

WaitEpisodes::WaitEpisodes(double log_threshold_seconds, std::vector<double> bucket_bounds)
    : log_threshold_seconds_(log_threshold_seconds), durations_(std::move(bucket_bounds)) {}

EpisodeChanges WaitEpisodes::Update(const std::vector<WaitSample>& samples) {
  EpisodeChanges changes;
  std::set<int> seen;
  for (const auto& sample : samples) {
    if (!seen.insert(sample.pid).second) continue;
    auto it = open_.find(sample.pid);
    // Same pid, new start: the old wait ended and a new one began.
    if (it != open_.end() && sample.start_us && *sample.start_us != it->second.start_us) {
      durations_.Observe(it->second.last_wait_seconds);
      changes.ended.push_back(it->second.last_wait_seconds);
      open_.erase(it);
      it = open_.end();
    }
    if (it == open_.end()) {
      // Without a start the episode could not be told apart from the next
      // one of the same pid; count it once its start is known.
      if (!sample.start_us) {
        seen.erase(sample.pid);
        continue;
      }
      it = open_.emplace(sample.pid, Episode{*sample.start_us, 0, false}).first;
      ++total_;
      ++changes.started;
    }
    it->second.last_wait_seconds = sample.wait_seconds;
    if (!it->second.logged && sample.wait_seconds >= log_threshold_seconds_) {
      it->second.logged = true;
      changes.crossed_threshold.push_back(sample.pid);
    }
  }
  for (auto it = open_.begin(); it != open_.end();) {
    if (seen.count(it->first)) {
      ++it;
      continue;
    }
    durations_.Observe(it->second.last_wait_seconds);
    changes.ended.push_back(it->second.last_wait_seconds);
    it = open_.erase(it);
  }
  return changes;
}

std::vector<double> LockWaitBuckets() {
  return {0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600};
}

}  // namespace seatwatch::locks
