#include "poll/recheck_budget.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "metrics/family.h"
#include "metrics/family_text.h"

namespace seatwatch::poll {

namespace {

double Seconds(config::Millis value) { return std::chrono::duration<double>(value).count(); }

std::uint64_t AllFullPasses(const metrics::IncrementalStatus& status) {
  return std::accumulate(status.full_passes.begin(), status.full_passes.end(), std::uint64_t{0},
                         [](std::uint64_t sum, const auto& entry) { return sum + entry.second; });
}

}  // namespace

void RecheckBudget::Configure(const config::Config& config) {
  interval_ = Seconds(config.changes.interval);
  longest_ = std::max(interval_, Seconds(config.poll.interval));
  seconds_per_second_ = Seconds(config.changes.recheck_time_per_minute) / 60.0;
  // Before any recheck: the interval; after a reload: the last wait, within
  // the new bounds.
  interval_seconds_ = std::clamp(interval_seconds_, interval_, longest_);
}

Clock::time_point RecheckBudget::Record(Clock::time_point start, double recheck_seconds) {
  recheck_seconds = std::max(recheck_seconds, 0.0);
  recheck_seconds_total_ += recheck_seconds;
  interval_seconds_ = std::clamp(recheck_seconds / seconds_per_second_, interval_, longest_);
  return start + std::chrono::duration_cast<Clock::duration>(
                     std::chrono::duration<double>(interval_seconds_));
}

std::string RecheckBudget::RenderMetrics() const {
  std::vector<prometheus::MetricFamily> families;
  auto total = metrics::CounterFamily(
      "seatwatch_changes_recheck_seconds_total",
      "Wall time the incremental checks' rechecks of changed keys waited on the checks lane's "
      "session (BEGIN, each statement until its rows were read, COMMIT; full passes not "
      "included): its rate is the share of that session they keep busy, held to [changes] "
      "recheck_time_per_minute.");
  metrics::AddCounter(total, {}, recheck_seconds_total_);
  families.push_back(std::move(total));
  families.push_back(metrics::SingleGauge(
      "seatwatch_changes_recheck_interval_seconds",
      "From the start of the last cycle with rechecks to the earliest next: [changes] "
      "interval, or longer when the rechecks' cost against [changes] recheck_time_per_minute "
      "holds the next cycle back, at most [poll] interval.",
      interval_seconds_));
  return metrics::RenderText(std::move(families));
}

bool WasRecheck(const metrics::IncrementalStatus& before, const metrics::IncrementalStatus& after) {
  return before.mode == "incremental" && AllFullPasses(after) == AllFullPasses(before);
}

}  // namespace seatwatch::poll
