#include "cleanup/run_summary.h"

#include <algorithm>
#include <utility>

namespace seatwatch::cleanup {

void RunSummary::AddBatch(const std::vector<FreedHold>& freed) {
  ++batches_;
  freed_ += freed.size();
  for (const auto& hold : freed) ++per_event_[hold.event_id];
}

std::string SummarizeEvents(const std::map<std::string, std::uint64_t>& per_event, size_t top) {
  if (per_event.empty()) return "-";
  std::vector<std::pair<std::string, std::uint64_t>> events(per_event.begin(), per_event.end());
  // Stable over the map's order, so ties stay ordered by event id.
  std::stable_sort(events.begin(), events.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out;
  size_t shown = std::min(top, events.size());
  for (size_t i = 0; i < shown; ++i) {
    if (!out.empty()) out += ' ';
    out += events[i].first + ":" + std::to_string(events[i].second);
  }
  if (events.size() > shown) {
    size_t rest = events.size() - shown;
    if (!out.empty()) out += ' ';
    out += "+" + std::to_string(rest) + (rest == 1 ? " more event" : " more events");
  }
  return out;
}

}  // namespace seatwatch::cleanup
