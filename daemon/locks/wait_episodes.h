#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "metrics/family.h"

namespace seatwatch::locks {

// One waiting session as one poll saw it.
struct WaitSample {
  int pid = 0;
  // When the wait began (Unix microseconds): pg_locks.waitstart, or
  // state_change on servers before 14. nullopt: not known yet.
  std::optional<std::int64_t> start_us;
  double wait_seconds = 0;
};

// What changed since the previous poll.
struct EpisodeChanges {
  int started = 0;
  std::vector<double> ended;           // durations of the episodes that ended
  std::vector<int> crossed_threshold;  // pids whose wait passed the log threshold now
};

// Lock-wait episodes across polls. An episode is one pid waiting since one
// start time: counted once when first seen; observed in the histogram with
// its last seen wait when a poll no longer shows it (a lower bound: the wait
// ended somewhere between that poll and this one). Waits that begin and end
// between two polls are never seen. Not thread-safe: owned by the locks check
// on the poller thread.
class WaitEpisodes {
 public:
  WaitEpisodes(double log_threshold_seconds, std::vector<double> bucket_bounds);

  EpisodeChanges Update(const std::vector<WaitSample>& samples);

  // A reload keeps counters, histogram and open episodes; only the log
  // threshold follows the new config.
  void set_log_threshold(double seconds) { log_threshold_seconds_ = seconds; }

  std::uint64_t total() const { return total_; }
  const metrics::HistogramData& durations() const { return durations_; }
  size_t open() const { return open_.size(); }

 private:
  struct Episode {
    std::int64_t start_us = 0;
    double last_wait_seconds = 0;
    bool logged = false;
  };

  double log_threshold_seconds_;
  std::map<int, Episode> open_;  // by pid
  std::uint64_t total_ = 0;
  metrics::HistogramData durations_;
};

// Buckets for lock waits: row locks in a sale last milliseconds, a session
// left idle in transaction holds them for minutes.
std::vector<double> LockWaitBuckets();

}  // namespace seatwatch::locks
