#include "page/page_model.h"

#include <algorithm>

#include "checks/lock_check.h"
#include "metrics/lifecycle_families.h"

namespace seatwatch::page {

namespace {

InvariantView ViewOf(const metrics::PollState& state, const metrics::CheckStatus& check,
                     const std::string& name) {
  InvariantView view;
  view.name = name;
  view.check = check.name;
  const metrics::InvariantResult* result = metrics::FindInvariant(check, name);
  if (!result) {
    view.verdict = Verdict::kUnknown;
    view.reason = !check.has_run ? "not run yet"
                                 : "check " + check.name + " failed: " + check.last_reason + ": " +
                                       check.last_error;
    return view;
  }
  view.help = result->help;
  view.runbook_url = result->runbook_url;
  auto history = state.history.find(name);
  if (history != state.history.end()) view.since_unix = history->second.since_unix;
  if (result->ok()) {
    view.verdict = Verdict::kOk;
    return view;
  }
  view.verdict = Verdict::kViolated;
  view.total = result->total();
  for (const auto& violation : result->violations) {
    if (violation.value == 0) continue;  // a key the query reported as fine
    ++view.rows;
    if (view.first_keys.size() < kShownKeys) {
      view.first_keys.push_back(violation);
      const auto* open = metrics::FindOpen(state, check.name, name, violation.labels);
      view.first_keys_since.push_back(open ? open->since_unix : 0);
      view.first_keys_cause.push_back(open ? open->first_violated_by : nullptr);
    }
  }
  if (result->detail) {
    metrics::DetailRows detail = *result->detail;
    if (detail.rows.size() > kShownDetailRows) {
      detail.rows.resize(kShownDetailRows);
      detail.truncated = true;
    }
    view.detail = std::move(detail);
  }
  return view;
}

// Why a section backed by a configured check has nothing to show.
std::string Unavailable(const metrics::CheckStatus& check) {
  if (!check.has_run) return "not run yet";
  return "the last run failed: " + check.last_reason + ": " + check.last_error;
}

}  // namespace

Verdict PageModel::Overall() const {
  if (violated > 0) return Verdict::kViolated;
  if (unknown > 0 || invariants.empty()) return Verdict::kUnknown;
  return Verdict::kOk;
}

PageModel BuildPageModel(const metrics::Snapshot& snapshot,
                         std::shared_ptr<const cleanup::CleanupStatus> cleanup, double now_unix) {
  PageModel model;
  model.now_unix = now_unix;
  model.cleanup = std::move(cleanup);
  model.database_up = snapshot.database_up;
  model.last_poll_unix = snapshot.last_poll_unix;
  model.last_successful_poll_unix = snapshot.last_successful_poll_unix;
  model.poll_interval_seconds = snapshot.poll_interval_seconds;
  if (!snapshot.state) return model;
  const metrics::PollState& state = *snapshot.state;
  model.polled = true;
  model.version = state.version;
  model.servers = state.servers;
  model.failovers_total = state.failovers_total;
  model.healed = metrics::RecentlyHealed(state);
  if (model.healed.size() > kShownHealed) model.healed.resize(kShownHealed);
  model.lifecycle_since_unix = metrics::LifecycleStart(state);

  const metrics::CheckStatus* locks_check = nullptr;
  const metrics::CheckStatus* holds_check = nullptr;
  for (const auto& check : state.checks) {
    for (const auto& name : check.invariants) {
      model.invariants.push_back(ViewOf(state, check, name));
      if (model.invariants.back().verdict == Verdict::kViolated) ++model.violated;
      if (model.invariants.back().verdict == Verdict::kUnknown) ++model.unknown;
    }
    model.checks.push_back(check);
    auto lock_poll = check.output ? checks::LockPollOf(*check.output) : nullptr;
    if (lock_poll) {
      model.locks = std::move(lock_poll);
      locks_check = &check;
    } else if (check.name == "locks" && !locks_check) {
      locks_check = &check;
    }
    const checks::HoldsCounts* holds = check.output ? checks::HoldsOf(*check.output) : nullptr;
    if (holds) {
      model.holds = *holds;
      holds_check = &check;
    } else if (check.name == "holds" && !holds_check) {
      holds_check = &check;
    }
  }
  model.locks_source.configured = locks_check != nullptr;
  if (!model.locks && locks_check) model.locks_source.unavailable = Unavailable(*locks_check);
  model.holds_source.configured = holds_check != nullptr;
  if (!model.holds && holds_check) model.holds_source.unavailable = Unavailable(*holds_check);
  return model;
}

}  // namespace seatwatch::page
