#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace seatwatch::metrics {

// What an incremental check (an entry with scoped_sql, [changes] enabled)
// says about itself after each run, for seatwatch_dirty_keys,
// seatwatch_full_passes_total, seatwatch_check_mode and /api/invariants.
struct IncrementalStatus {
  // "incremental" while the feed is up and the check's last result is seeded
  // in the feed's current generation (its next run rechecks dirty keys
  // only); "full" otherwise.
  std::string mode = "full";
  // Why the mode is full when the change feed says ("coverage lost: table
  // public.tickets is not in publication seatwatch: ..."), for the status
  // page and /api/invariants; empty otherwise.
  std::string mode_reason;
  // Keys the last run rechecked (0 after a full pass or a cycle with none).
  std::uint64_t dirty_keys = 0;
  // Full passes so far by reason; every reason present from 0.
  std::map<std::string, std::uint64_t> full_passes;
  double last_full_pass_unix = 0;     // 0: none yet
  double last_full_pass_seconds = 0;  // what the last one cost (wall time)
  // Backstop differences the feed confirmed, by invariant ("" for a
  // [[metric]] entry); every invariant of the entry present from 0.
  std::map<std::string, std::uint64_t> mismatches;
  // Provenance (entries with invariants whose key is a label): commits held
  // for keys not yet found clean, and those the overall cap evicted.
  bool provenance = false;
  std::uint64_t provenance_commits = 0;
  std::uint64_t provenance_evicted = 0;
  // Declared checks whose rows are sums over rows (checks/RowLedger): the
  // keys whose rows are followed one by one and the rows held for them,
  // and how the keys rechecked so far were read: by their changed rows, or
  // whole (by the check's scoped SQL).
  bool row_ledger = false;
  std::uint64_t followed_keys = 0;
  std::uint64_t followed_rows = 0;
  std::uint64_t rechecked_by_rows = 0;
  std::uint64_t rechecked_whole = 0;
};

}  // namespace seatwatch::metrics
