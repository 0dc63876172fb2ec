#include "metrics/violation_lifecycle.h"

namespace seatwatch::metrics {

namespace {

// Unit separators cannot occur in names; a label value may hold anything
// else, and its name before '=' keeps the pairs apart.
std::string KeyOf(const std::string& check, const std::string& invariant, const Labels& labels) {
  std::string key = check + '\x1f' + invariant;
  for (const auto& label : labels) key += '\x1f' + label.name + '=' + label.value;
  return key;
}

std::string PrefixOf(const std::string& check, const std::string& invariant) {
  return check + '\x1f' + invariant;
}

}  // namespace

std::vector<double> ViolationLifecycle::DurationBuckets() {
  return {1, 5, 15, 30, 60, 300, 900, 1800, 3600, 14400, 86400};
}

LifecycleState::Counts::Counts() : durations(ViolationLifecycle::DurationBuckets()) {}

ViolationLifecycle::ViolationLifecycle(double started_unix) {
  state_.started_unix = started_unix;
}

bool ViolationLifecycle::Observe(const std::string& check,
                                 const std::vector<InvariantResult>& invariants, double now) {
  bool changed = false;
  for (const auto& invariant : invariants) {
    auto& counts = state_.counts[{check, invariant.name}];
    std::set<std::string> seen;
    for (const auto& violation : invariant.violations) {
      if (violation.value == 0) continue;
      std::string key = KeyOf(check, invariant.name, violation.labels);
      seen.insert(key);
      auto it = state_.open.find(key);
      if (it != state_.open.end()) {
        it->second.last_seen_unix = now;
        continue;
      }
      changed = true;
      counts.detected += 1;
      if (state_.open.size() >= kMaxOpen) {
        state_.untracked += 1;
        continue;
      }
      OpenViolation opened{check, invariant.name, violation.labels, now, now, violation.cause,
                           false};
      if (opened.first_violated_by) {
        if (state_.with_provenance < kMaxWithProvenance) {
          state_.with_provenance += 1;
        } else {
          opened.first_violated_by = nullptr;
          opened.provenance_dropped = true;
        }
      }
      if (opened_.size() < kMaxOpenedReported) {
        opened_.push_back(opened);
      } else {
        opened_more_ += 1;
      }
      state_.open.emplace(key, std::move(opened));
    }
    // Every open key of this invariant the run did not return has healed.
    std::string prefix = PrefixOf(check, invariant.name);
    for (auto it = state_.open.lower_bound(prefix); it != state_.open.end();) {
      const OpenViolation& open = it->second;
      if (open.check != check || open.invariant != invariant.name) {
        if (it->first.compare(0, prefix.size(), prefix) != 0) break;
        ++it;  // another invariant whose name starts with this one's
        continue;
      }
      if (seen.count(it->first)) {
        ++it;
        continue;
      }
      changed = true;
      counts.healed += 1;
      counts.durations.Observe(now - open.since_unix);
      state_.healed.push_front(
          {open.check, open.invariant, open.labels, open.since_unix, now, open.first_violated_by});
      if (open.first_violated_by) state_.with_provenance -= 1;
      if (state_.healed.size() > kMaxHealed) state_.healed.pop_back();
      it = state_.open.erase(it);
    }
  }
  // last_seen moved: the published copy is stale even with no change.
  published_.reset();
  return changed;
}

bool ViolationLifecycle::Retain(const std::set<std::pair<std::string, std::string>>& configured) {
  bool changed = false;
  for (auto it = state_.open.begin(); it != state_.open.end();) {
    if (configured.count({it->second.check, it->second.invariant})) {
      ++it;
    } else {
      if (it->second.first_violated_by) state_.with_provenance -= 1;
      it = state_.open.erase(it);
      changed = true;
    }
  }
  for (auto it = state_.counts.begin(); it != state_.counts.end();) {
    if (configured.count(it->first)) {
      ++it;
    } else {
      it = state_.counts.erase(it);
      changed = true;
    }
  }
  if (changed) published_.reset();
  return changed;
}

std::shared_ptr<const LifecycleState> ViolationLifecycle::State() {
  if (!published_) published_ = std::make_shared<const LifecycleState>(state_);
  return published_;
}

std::vector<OpenViolation> ViolationLifecycle::TakeOpened(std::uint64_t* more) {
  if (more) *more = opened_more_;
  opened_more_ = 0;
  return std::exchange(opened_, {});
}

const OpenViolation* FindOpen(const LifecycleState& state, const std::string& check,
                              const std::string& invariant, const Labels& labels) {
  auto it = state.open.find(KeyOf(check, invariant, labels));
  return it == state.open.end() ? nullptr : &it->second;
}

}  // namespace seatwatch::metrics
