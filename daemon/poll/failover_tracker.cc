#include "poll/failover_tracker.h"

#include <algorithm>

#include "util/log.h"

namespace seatwatch::poll {

namespace {

std::string Describe(const std::string& system_identifier, std::uint32_t timeline) {
  return system_identifier + "/" + std::to_string(timeline);
}

constexpr const char* kSplitBrain =
    "lane reaches a server on an older timeline than seen before: split brain?";

}  // namespace

bool FailoverTracker::BehindAnotherPrimary(std::size_t lane_index,
                                           const metrics::LaneServer& server) {
  const db::ServerFacts& facts = server.facts;
  if (facts.in_recovery) {
    warned_.erase(lane_index);
    return false;
  }
  std::uint32_t& newest = primary_highest_[facts.system_identifier];
  if (facts.timeline >= newest) {
    newest = facts.timeline;
    warned_.erase(lane_index);
    return false;
  }
  auto warned = warned_.find(lane_index);
  if (warned != warned_.end() && warned->second.system_identifier == facts.system_identifier &&
      warned->second.timeline == facts.timeline) {
    return true;  // said already
  }
  warned_[lane_index] = Identity{facts.system_identifier, facts.timeline};
  log::Warn(kSplitBrain, {{"lane", server.lane},
                          {"from", Describe(facts.system_identifier, newest)},
                          {"to", Describe(facts.system_identifier, facts.timeline)}});
  return true;
}

bool FailoverTracker::Observe(std::size_t lane_index, const metrics::LaneServer& server) {
  const db::ServerFacts& facts = server.facts;
  if (facts.system_identifier.empty()) return false;
  bool warned = BehindAnotherPrimary(lane_index, server);
  Identity now{facts.system_identifier, facts.timeline};
  auto highest = highest_.find(now.system_identifier);
  bool known = highest != highest_.end();
  auto last = last_.find(lane_index);
  if (last == last_.end()) {
    last_.emplace(lane_index, now);
    if (!known) highest_.emplace(now.system_identifier, now.timeline);
    return false;
  }
  Identity before = last->second;
  if (before.system_identifier == now.system_identifier && before.timeline == now.timeline) {
    return false;
  }
  last->second = now;
  bool counted = !known || now.timeline > highest->second;
  if (!known) {
    highest_.emplace(now.system_identifier, now.timeline);
  } else {
    highest->second = std::max(highest->second, now.timeline);
  }
  if (counted) {
    ++count_;
    log::Warn("database server changed (failover)",
              {{"lane", server.lane},
               {"from", Describe(before.system_identifier, before.timeline)},
               {"to", Describe(now.system_identifier, now.timeline)}});
  } else if (!warned && !facts.in_recovery && before.system_identifier == now.system_identifier &&
             now.timeline < before.timeline) {
    // Not a standby: an old primary rejoined as one reads the timeline of
    // its last restartpoint, still the old one until its next.
    log::Warn(kSplitBrain,
              {{"lane", server.lane},
               {"from", Describe(before.system_identifier, before.timeline)},
               {"to", Describe(now.system_identifier, now.timeline)}});
  }
  return counted;
}

}  // namespace seatwatch::poll
