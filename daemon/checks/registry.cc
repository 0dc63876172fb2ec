#include "checks/registry.h"

#include "checks/holds_check.h"
#include "checks/invariant_check.h"
#include "checks/lock_check.h"
#include "checks/metric_check.h"

namespace seatwatch::checks {

std::vector<std::unique_ptr<Check>> BuildChecks(const config::Config& config) {
  std::vector<std::unique_ptr<Check>> checks;
  // Entries with scoped_sql are incremental only while [changes] is on;
  // otherwise they run their full query at their interval, as any other.
  std::optional<IncrementalSettings> incremental;
  if (config.changes.enabled) {
    incremental = IncrementalSettings{config.changes.interval, config.changes.full_pass_interval};
  }
  for (const auto& entry : config.queries) {
    auto interval = config.IntervalOf(entry);
    if (entry.kind == config::QueryConfig::Kind::kInvariant) {
      checks.push_back(std::make_unique<InvariantCheck>(entry, interval, incremental));
    } else {
      checks.push_back(std::make_unique<MetricCheck>(entry, interval, incremental));
    }
  }
  if (config.holds.enabled) {
    Millis interval = config.holds.interval.value_or(config.poll.interval);
    checks.push_back(std::make_unique<HoldsCheck>(config.holds, interval));
  }
  if (config.locks.enabled) checks.push_back(std::make_unique<LockCheck>(config.locks));
  return checks;
}

}  // namespace seatwatch::checks
