#pragma once

#include <cstdint>
#include <string>

namespace seatwatch::cleanup {

// The cleanup's state as the status page shows it: the facts behind its
// metrics plus how the last run ended. A plain value, published beside the
// metrics text (PublishedText) after every batch and every run.
struct CleanupStatus {
  bool enabled = false;
  bool dry_run = false;
  bool leader = false;
  // The cleanup's connection reaches a standby (in recovery): it frees
  // nothing and waits; leader is false meanwhile.
  bool in_recovery = false;
  double interval_seconds = 0;
  std::uint64_t freed = 0;  // since the process started
  std::uint64_t batches_ok = 0;
  std::uint64_t batches_lock_timeout = 0;
  std::uint64_t batches_error = 0;
  double last_success_unix = 0;  // 0: never
  // The last run this instance made as the leader (0: none yet).
  double last_run_unix = 0;
  std::string last_run_result;  // "ok", "lock_timeout" or "error"
  std::uint64_t last_run_freed = 0;
  std::string last_run_error;  // the failed batch's message
};

}  // namespace seatwatch::cleanup
