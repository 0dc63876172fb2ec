#include "poll/failover_tracker.h"

#include <algorithm>

#include "util/log.h"

namespace seatwatch::poll {

namespace {

std::string Describe(const std::string& system_identifier, std::uint32_t timeline) {
  return system_identifier + "/" + std::to_string(timeline);
}

}  // namespace

bool FailoverTracker::Observe(std::size_t lane_index, const metrics::LaneServer& server) {
  const metrics::ServerFacts& facts = server.facts;
  if (facts.system_identifier.empty()) return false;
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
  } else if (before.system_identifier == now.system_identifier && now.timeline < before.timeline) {
    log::Warn("lane reaches a server on an older timeline than seen before: split brain?",
              {{"lane", server.lane},
               {"from", Describe(before.system_identifier, before.timeline)},
               {"to", Describe(now.system_identifier, now.timeline)}});
  }
  return counted;
}

}  // namespace seatwatch::poll
