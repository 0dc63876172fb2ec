#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "metrics/check_output.h"
#include "metrics/incremental_status.h"
#include "metrics/lane_server.h"
#include "metrics/violation_lifecycle.h"

namespace seatwatch::metrics {

// A check's series in text format, in parts written one after the other: a
// part its run did not change (CheckOutput::parts) is the same object as
// before, which snapshots share and the gzip cache deflated once.
struct RenderedText {
  std::vector<std::shared_ptr<const std::string>> parts;

  // A text in one part.
  static std::shared_ptr<const RenderedText> Of(std::string text) {
    auto rendered = std::make_shared<RenderedText>();
    rendered->parts.push_back(std::make_shared<const std::string>(std::move(text)));
    return rendered;
  }

  // The parts joined: for tests and the --once report, not for scrapes.
  std::string Text() const {
    std::string text;
    for (const auto& part : parts) text += *part;
    return text;
  }
};

// The poller's record of one check, as the snapshot builder needs it.
struct CheckStatus {
  std::string name;
  double interval_seconds = 0;
  std::vector<std::string> invariants;  // the invariants this check judges
  std::map<std::string, std::string> help;  // invariant -> its help, from the config
  bool has_run = false;
  bool success = false;
  double duration_seconds = 0;
  // The part of the last run's duration spent waiting on the server (its
  // transaction's BEGIN, statements and COMMIT), without seatwatch's own
  // work between them: what the recheck budget counts.
  double database_seconds = 0;
  double last_success_unix = 0;
  std::map<std::string, std::uint64_t> errors;  // reason -> failures so far
  std::string last_error;
  std::string last_reason;
  // Null unless the last run succeeded. Its families are empty: they are
  // rendered into `rendered` when the check runs, then dropped.
  std::shared_ptr<const CheckOutput> output;
  // The check's series in text format, rendered once when the check ran, so
  // a poll of one check does not re-render every other check's series. Null
  // unless the last run succeeded.
  std::shared_ptr<const RenderedText> rendered;
  // Incremental checks only: kept after every run, success or failure.
  std::optional<IncrementalStatus> incremental;
};

// The result of the invariant `name` in the check's last successful run, or
// nullptr (the check failed, has not run, or did not return it).
inline const InvariantResult* FindInvariant(const CheckStatus& check, const std::string& name) {
  if (!check.output) return nullptr;
  const InvariantResult* found = nullptr;
  for (const auto& candidate : check.output->invariants) {
    if (candidate.name == name) found = &candidate;
  }
  return found;
}

// When an invariant's current OK/VIOLATED status began, as this process saw it.
struct InvariantHistory {
  bool ok = true;
  double since_unix = 0;
};

struct PollState {
  std::string version;
  bool database_up = false;
  double last_poll_unix = 0;
  double last_successful_poll_unix = 0;
  double poll_interval_seconds = 0;
  std::vector<CheckStatus> checks;
  std::map<std::string, InvariantHistory> history;
  // Each violated key's lifecycle: a lane's own (at most one), or every
  // lane's in the merged state.
  std::vector<std::shared_ptr<const LifecycleState>> lifecycles;
  // The change feed's own series (seatwatch_changes_*) in text format, from
  // its last drain; empty without a feed (checks lane only).
  std::string changes_metrics;
  // The server each lane read on its last poll: a lane's own state holds at
  // most its own entry (none while it cannot reach the database, or before
  // its first poll); the merged state holds every lane's, in lane order.
  // Rendered as seatwatch_database_in_recovery{lane},
  // seatwatch_replica_lag_seconds{lane} and seatwatch_database_timeline{lane}.
  std::vector<LaneServer> servers;
  // seatwatch_database_failovers_total: set by the StatePublisher's
  // FailoverTracker on the merged state (0 in a lane's own state and in
  // --once).
  std::uint64_t failovers_total = 0;
};

}  // namespace seatwatch::metrics
