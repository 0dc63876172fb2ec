#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "metrics/poll_state.h"

namespace seatwatch::metrics {

// Everything the HTTP side serves about the monitored database, rendered once
// per poll. Immutable after publication, so scrapes only copy a pointer.
struct Snapshot {
  // Prometheus text exposition format, in pieces written one after the other:
  // seatwatch's own families (up, checks, invariants), rendered per publish,
  // then each check's text, shared with the check's status rather than
  // copied. The locks lane publishes every 2 s; at 5M seats the inventory's
  // 2.4 MB would otherwise be copied each time though it changes only when
  // the pack runs.
  std::vector<std::shared_ptr<const std::string>> metrics_parts;
  std::string invariants_json;   // GET /api/invariants
  std::map<std::string, std::string> documents;  // GET /api/<name>, e.g. locks
  bool database_up = false;
  double last_poll_unix = 0;             // 0 before the first poll
  double last_successful_poll_unix = 0;  // last poll that reached the database
  double poll_interval_seconds = 0;
  // The (merged) poll state all of the above was made from, for the status
  // page, which renders it per page view; null before the first publish.
  std::shared_ptr<const PollState> state;

  // metrics_parts joined: for tests and tools, not for the scrape path.
  std::string MetricsText() const {
    std::string text;
    for (const auto& part : metrics_parts) text += *part;
    return text;
  }
};

// The hand-over point between the poller (writer) and HTTP threads
// (readers). Thread-safe.
class SnapshotStore {
 public:
  void Publish(std::shared_ptr<const Snapshot> snapshot) {
    std::lock_guard<std::mutex> lock(mutex_);
    current_ = std::move(snapshot);
  }
  std::shared_ptr<const Snapshot> Current() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return current_;
  }

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const Snapshot> current_ = std::make_shared<const Snapshot>();
};

}  // namespace seatwatch::metrics
