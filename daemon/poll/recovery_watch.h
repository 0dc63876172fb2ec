#pragma once

#include <optional>
#include <string>

namespace seatwatch::poll {

// Follows whether a lane's server is a standby, poll by poll, and says so
// in the log once per change rather than every poll: "lane reads a standby
// (in recovery)" when it first reads one (or on its first poll), "lane reads
// a primary now" after a promotion. Not thread-safe (the poller's thread).
class RecoveryWatch {
 public:
  enum class Change { kNone, kToStandby, kToPrimary };

  // `in_recovery` as the lane's last facts read said; `masked_dsn` for the
  // log line.
  Change Observe(bool in_recovery, const std::string& lane, const std::string& masked_dsn);

  // Unknown before the first successful read.
  std::optional<bool> in_recovery() const { return in_recovery_; }

 private:
  std::optional<bool> in_recovery_;
};

}  // namespace seatwatch::poll
