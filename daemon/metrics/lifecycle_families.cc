#include "metrics/lifecycle_families.h"

#include <algorithm>

#include "metrics/family.h"

namespace seatwatch::metrics {

namespace {

const LifecycleState::Counts* CountsOf(const PollState& state, const std::string& check,
                                       const std::string& invariant) {
  for (const auto& lifecycle : state.lifecycles) {
    if (!lifecycle) continue;
    auto it = lifecycle->counts.find({check, invariant});
    if (it != lifecycle->counts.end()) return &it->second;
  }
  return nullptr;
}

prometheus::MetricFamily SingleCounter(std::string name, std::string help, double value) {
  auto family = CounterFamily(std::move(name), std::move(help));
  AddCounter(family, {}, value);
  return family;
}

}  // namespace

void AddLifecycleFamilies(const PollState& state, std::vector<prometheus::MetricFamily>& out) {
  auto since = GaugeFamily(
      "seatwatch_invariant_violated_since_timestamp_seconds",
      "Unix time of the first run of its check that returned this key violated, as this process "
      "saw it: one series per key violated now (those of seatwatch_invariant_violations, with "
      "the check).");
  auto detected = CounterFamily("seatwatch_invariant_violations_detected_total",
                                "Keys that turned violated: a successful run returned a key its "
                                "check's last run did not.");
  auto healed = CounterFamily("seatwatch_invariant_violations_healed_total",
                              "Violated keys that a later successful run of their check no "
                              "longer returned.");
  auto lasted = HistogramFamily("seatwatch_invariant_violation_duration_seconds",
                                "How long healed violations lasted: from the run that first "
                                "returned the key to the run that no longer did.");
  const HistogramData none(ViolationLifecycle::DurationBuckets());
  for (const auto& check : state.checks) {
    for (const auto& name : check.invariants) {
      const auto* counts = CountsOf(state, check.name, name);
      Labels labels{{"check", check.name}, {"invariant", name}};
      AddCounter(detected, labels, counts ? static_cast<double>(counts->detected) : 0);
      AddCounter(healed, labels, counts ? static_cast<double>(counts->healed) : 0);
      (counts ? counts->durations : none).AddTo(lasted, labels);
    }
    // Only while the check's verdicts are served, as the violations are.
    if (!check.output) continue;
    for (const auto& invariant : check.output->invariants) {
      for (const auto& violation : invariant.violations) {
        const OpenViolation* open = FindOpen(state, check.name, invariant.name, violation.labels);
        if (!open) continue;
        Labels labels{{"check", check.name}, {"invariant", invariant.name}};
        labels.insert(labels.end(), violation.labels.begin(), violation.labels.end());
        AddGauge(since, std::move(labels), open->since_unix);
      }
    }
  }
  double untracked = 0;
  for (const auto& lifecycle : state.lifecycles) {
    if (lifecycle) untracked += static_cast<double>(lifecycle->untracked);
  }
  out.push_back(SingleCounter("seatwatch_invariant_violations_untracked_total",
                              "Keys that turned violated while 100,000 others were open: "
                              "counted as detected, their lifecycle not followed.",
                              untracked));
  out.push_back(std::move(since));
  out.push_back(std::move(detected));
  out.push_back(std::move(healed));
  out.push_back(std::move(lasted));
}

const OpenViolation* FindOpen(const PollState& state, const std::string& check,
                              const std::string& invariant, const Labels& labels) {
  for (const auto& lifecycle : state.lifecycles) {
    if (!lifecycle) continue;
    if (const auto* open = FindOpen(*lifecycle, check, invariant, labels)) return open;
  }
  return nullptr;
}

std::vector<HealedViolation> RecentlyHealed(const PollState& state) {
  std::vector<HealedViolation> out;
  for (const auto& lifecycle : state.lifecycles) {
    if (lifecycle) out.insert(out.end(), lifecycle->healed.begin(), lifecycle->healed.end());
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.healed_unix > b.healed_unix;
  });
  if (out.size() > ViolationLifecycle::kMaxHealed) out.resize(ViolationLifecycle::kMaxHealed);
  return out;
}

double LifecycleStart(const PollState& state) {
  double start = 0;
  for (const auto& lifecycle : state.lifecycles) {
    if (lifecycle && (start == 0 || lifecycle->started_unix < start)) {
      start = lifecycle->started_unix;
    }
  }
  return start;
}

}  // namespace seatwatch::metrics
