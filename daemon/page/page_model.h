#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checks/holds_check.h"
#include "cleanup/cleanup_status.h"
#include "locks/lock_poll.h"
#include "metrics/lane_server.h"
#include "metrics/poll_state.h"
#include "metrics/snapshot.h"

namespace seatwatch::page {

// How much of each list the page shows; the rest is counted and left to
// /api/invariants and /api/locks, so a page view stays small however large
// the violation or the pile-up.
inline constexpr size_t kShownKeys = 10;        // offending keys per invariant
inline constexpr size_t kShownDetailRows = 10;  // detail rows per invariant
inline constexpr size_t kShownSessions = 200;   // sessions drawn in the forest
inline constexpr size_t kShownHealed = 10;      // keys that healed lately

enum class Verdict { kOk, kViolated, kUnknown };

struct InvariantView {
  std::string name;
  std::string check;
  std::string help;         // the invariant's own, else its entry's
  std::string runbook_url;  // its runbook entry (empty: none configured)
  Verdict verdict = Verdict::kUnknown;
  std::string reason;                         // kUnknown: why there is no verdict
  double since_unix = 0;                      // when the current status began (0: not known)
  size_t rows = 0;                            // offending rows the query returned
  double total = 0;                           // their values summed
  std::vector<metrics::Violation> first_keys;  // the first kShownKeys offending rows
  // Each first key's start (its lifecycle's since), in the same order; 0:
  // not followed.
  std::vector<double> first_keys_since;
  // Incremental mode: the commits that first violated each shown key (null
  // where none are known).
  std::vector<std::shared_ptr<const metrics::Provenance>> first_keys_cause;
  // The first kShownDetailRows rows of detail_sql (rows cut; `truncated`
  // set when more were there or the detail limits cut some).
  std::optional<metrics::DetailRows> detail;
};

// A section backed by one check (locks, holds): shown from its last
// successful run, or why there is none; left out when no such check exists.
struct SectionSource {
  bool configured = false;  // a check of that name exists
  std::string unavailable;  // configured, with nothing to show: why
};

// Everything the status page shows, taken from one snapshot (and the
// cleanup's status) at one instant. A plain value.
struct PageModel {
  double now_unix = 0;
  std::string version;
  bool polled = false;  // a poll state has been published
  bool database_up = false;
  double last_poll_unix = 0;
  double last_successful_poll_unix = 0;
  double poll_interval_seconds = 0;

  std::vector<InvariantView> invariants;  // in configuration order
  int violated = 0;
  int unknown = 0;

  SectionSource locks_source;
  std::shared_ptr<const locks::LockPoll> locks;  // null: see locks_source

  SectionSource holds_source;
  std::optional<checks::HoldsCounts> holds;

  std::shared_ptr<const cleanup::CleanupStatus> cleanup;  // null: not known

  // Each check's record as the poller keeps it (its health; the outputs are
  // read into the sections above).
  std::vector<metrics::CheckStatus> checks;

  // The server each lane read on its last poll, in lane order (empty: no
  // lane reached its database), and the failovers seen since start.
  std::vector<metrics::LaneServer> servers;
  std::uint64_t failovers_total = 0;

  // The last keys that healed (newest first, at most kShownHealed), and
  // since when this process follows lifecycles.
  std::vector<metrics::HealedViolation> healed;
  double lifecycle_since_unix = 0;

  // OK when every invariant holds, VIOLATED when any is violated, else
  // UNKNOWN (no invariant configured, none judged yet, or one without a
  // verdict).
  Verdict Overall() const;
};

// Builds the model from the snapshot's poll state (never the database).
// Pure.
PageModel BuildPageModel(const metrics::Snapshot& snapshot,
                         std::shared_ptr<const cleanup::CleanupStatus> cleanup, double now_unix);

}  // namespace seatwatch::page
