#include "checks/registry.h"

#include "checks/invariant_check.h"
#include "checks/metric_check.h"

namespace seatwatch::checks {

std::vector<std::unique_ptr<Check>> BuildChecks(const config::Config& config) {
  std::vector<std::unique_ptr<Check>> checks;
  for (const auto& entry : config.queries) {
    auto interval = config.IntervalOf(entry);
    if (entry.kind == config::QueryConfig::Kind::kInvariant) {
      checks.push_back(std::make_unique<InvariantCheck>(entry, interval));
    } else {
      checks.push_back(std::make_unique<MetricCheck>(entry, interval));
    }
  }
  return checks;
}

}  // namespace seatwatch::checks
