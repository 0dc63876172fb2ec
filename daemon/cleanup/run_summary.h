#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace seatwatch::cleanup {

// One hold a batch set free (or, in dry-run mode, would have).
struct FreedHold {
  std::string event_id;
  std::string seat;
};

// What one cleanup run did, for its log line: how many holds in which
// events. Pure; not thread-safe.
class RunSummary {
 public:
  void AddBatch(const std::vector<FreedHold>& freed);

  std::uint64_t freed() const { return freed_; }
  int batches() const { return batches_; }
  const std::map<std::string, std::uint64_t>& per_event() const { return per_event_; }

 private:
  std::map<std::string, std::uint64_t> per_event_;
  std::uint64_t freed_ = 0;
  int batches_ = 0;
};

// The events of a run for the log: the `top` events with the most freed
// holds as "event:count", most first (ties by event id), then "+N more
// events" if some were left out; "-" when nothing was freed. Bounded in
// length however many events a run touches.
std::string SummarizeEvents(const std::map<std::string, std::uint64_t>& per_event, size_t top);

}  // namespace seatwatch::cleanup
