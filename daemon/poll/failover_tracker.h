#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "metrics/lane_server.h"

namespace seatwatch::poll {

// Counts failovers (seatwatch_database_failovers_total) from what the lanes
// report of their servers, once per change however many lanes see it.
// A server is known by its identity: system identifier and timeline.
//   - Unknown identity (no system identifier: the role may not read it):
//     ignored.
//   - A lane's first identity: recorded, not counted (the process just
//     started, or the lane was just enabled). It is the highest timeline of
//     its system identifier only if that identifier was new: a lane that
//     starts after a promotion must not hide the move from a lane that saw
//     the old primary and sees the new one later.
//   - A lane whose identity differs from its last one: counted if its
//     system identifier was never seen, or its timeline is higher than the
//     highest seen for that identifier. Not counted otherwise: another lane
//     counted the same move already, or a standby's restartpoint caught up
//     with the timeline. A lane back on a primary on a lower timeline than
//     its own last one of the same system identifier is warned about (two
//     servers think they are the primary?), not counted; back on a standby
//     it is not (the old primary rejoined as a standby after a failover
//     reads the timeline of its last restartpoint, the old one).
//   - A lane on a primary whose timeline is lower than that of another
//     primary of the same system identifier seen before (by any lane) is
//     warned about too, once while it stays there: the old primary is still
//     up as a primary next to the promoted one. A standby is never warned
//     about: its restartpoint's timeline lags behind by design.
// Logs each counted change at warn. Pure otherwise; not thread-safe (the
// StatePublisher calls it under its mutex).
class FailoverTracker {
 public:
  // Returns whether this observation counted a failover.
  bool Observe(std::size_t lane_index, const metrics::LaneServer& server);
  std::uint64_t count() const { return count_; }

 private:
  struct Identity {
    std::string system_identifier;
    std::uint32_t timeline = 0;
  };
  std::map<std::size_t, Identity> last_;           // by lane
  std::map<std::string, std::uint32_t> highest_;  // by system identifier
  // The highest timeline any lane saw a primary on, by system identifier,
  // and the lanes warned about being behind it.
  std::map<std::string, std::uint32_t> primary_highest_;
  std::map<std::size_t, Identity> warned_;  // by lane: the identity warned about
  bool BehindAnotherPrimary(std::size_t lane_index, const metrics::LaneServer& server);
  std::uint64_t count_ = 0;
};

}  // namespace seatwatch::poll
