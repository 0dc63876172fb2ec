#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "metrics/check_output.h"
#include "metrics/family.h"
#include "metrics/provenance.h"

namespace seatwatch::metrics {

// A key of an invariant that is violated now: since when (the first run of
// its check that returned it, as this process saw it) and when a run last
// returned it.
struct OpenViolation {
  std::string check;
  std::string invariant;
  Labels labels;
  double since_unix = 0;
  double last_seen_unix = 0;
  // Incremental mode: the commits that changed the key before the run that
  // first returned it (Violation::cause at that run), kept as they were.
  std::shared_ptr<const Provenance> first_violated_by;
  // It had some, not kept: kMaxWithProvenance open keys held theirs.
  bool provenance_dropped = false;
};

// A key that was violated and is no longer: what on-call asks after the
// page has cleared.
struct HealedViolation {
  std::string check;
  std::string invariant;
  Labels labels;
  double since_unix = 0;
  double healed_unix = 0;
  std::shared_ptr<const Provenance> first_violated_by;
};

// What ViolationLifecycle renders from: copied into the published state
// only when a run changed it.
struct LifecycleState {
  double started_unix = 0;  // before it, this process knows nothing
  // check \x1f invariant \x1f label=value... -> the open violation
  std::map<std::string, OpenViolation> open;
  struct Counts {
    std::uint64_t detected = 0;
    std::uint64_t healed = 0;
    HistogramData durations;
    Counts();
  };
  std::map<std::pair<std::string, std::string>, Counts> counts;  // (check, invariant)
  std::deque<HealedViolation> healed;                           // newest first
  std::uint64_t untracked = 0;  // keys not followed: more open than kMaxOpen
  std::size_t with_provenance = 0;  // open keys that hold a first_violated_by
};

// The lifecycle of each violated key: opened when a run of its check first
// returns it with a value, healed when a later successful run no longer
// does, how long that lasted. Runs that failed say nothing (the key stays
// open). In memory only: a restart starts afresh (started_unix says when).
// Single-threaded (a lane's poller).
class ViolationLifecycle {
 public:
  static constexpr std::size_t kMaxOpen = 100000;
  // Open keys that keep their provenance (each at most ProvenanceLedger's
  // ring of commits): a bulk write that breaks 100,000 keys at once names
  // its commit on the first ones, and says so on the others.
  static constexpr std::size_t kMaxWithProvenance = 1000;
  static constexpr std::size_t kMaxHealed = 50;
  // How long violations lasted, from a poll to a day.
  static std::vector<double> DurationBuckets();

  explicit ViolationLifecycle(double started_unix);

  // One successful run of `check` (its invariants as returned) at `now`.
  // Returns whether anything changed.
  bool Observe(const std::string& check, const std::vector<InvariantResult>& invariants,
               double now);
  // Drops what belongs to invariants no longer configured (a reload), with
  // no count: they did not heal. `configured` holds (check, invariant).
  bool Retain(const std::set<std::pair<std::string, std::string>>& configured);

  std::shared_ptr<const LifecycleState> State();
  // The keys opened since the last call (at most kMaxOpenedReported, and
  // how many more), for the log line that reports each new violation.
  static constexpr std::size_t kMaxOpenedReported = 20;
  std::vector<OpenViolation> TakeOpened(std::uint64_t* more);

 private:
  LifecycleState state_;
  std::shared_ptr<const LifecycleState> published_;
  std::vector<OpenViolation> opened_;
  std::uint64_t opened_more_ = 0;
};

// The open violation of `labels` of (check, invariant), or nullptr.
const OpenViolation* FindOpen(const LifecycleState& state, const std::string& check,
                              const std::string& invariant, const Labels& labels);

}  // namespace seatwatch::metrics
