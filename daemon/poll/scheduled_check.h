#pragma once

#include <chrono>
#include <memory>

#include "checks/check.h"
#include "db/failure.h"
#include "metrics/poll_state.h"

namespace seatwatch::poll {

using Clock = std::chrono::steady_clock;

// A check with its schedule and its record. Owned by the poller thread.
struct ScheduledCheck {
  std::unique_ptr<checks::Check> check;
  metrics::CheckStatus status;
  Clock::time_point next_due{};
};

// Records one run's outcome: counters, timestamps, the output kept for the
// next snapshot, and a log line only when the check changes state (failing,
// recovered, or failing for a new reason). The run's database_seconds start
// at zero: the caller that ran it in a transaction sets them.
void RecordSuccess(ScheduledCheck& entry, metrics::CheckOutput output, double duration_seconds,
                   double now_unix);
void RecordFailure(ScheduledCheck& entry, db::FailureReason reason, const std::string& message,
                   double duration_seconds);
// Counts a failed attempt in the check's errors without making it the
// check's result (its last run, output and state stay): an attempt that is
// run again at once, whose second outcome is recorded.
void CountFailedAttempt(ScheduledCheck& entry, db::FailureReason reason);

// Every reason starts at zero so that rate() sees the first failure.
void InitErrorCounters(metrics::CheckStatus& status);

}  // namespace seatwatch::poll
