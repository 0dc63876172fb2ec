#include "page/page_summary.h"

#include <algorithm>

#include "page/page_format.h"

namespace seatwatch::page {

namespace {

std::string Plural(const std::string& noun, size_t count) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

std::string ViolatedLine(const InvariantView& view) {
  std::string text = view.name + ": " + KeyNoun(view.first_keys, view.rows);
  if (view.total != static_cast<double>(view.rows)) {
    text += " (" + FormatNumber(view.total) +
            (view.total == 1 ? " offending row)" : " offending rows)");
  }
  return text;
}

void AddBlocking(std::vector<SummaryLine>& lines, const locks::LockPoll& poll) {
  // The forest's roots each block someone, most blocked first.
  const std::vector<int>& roots = poll.forest.roots;
  for (size_t i = 0; i < roots.size() && i < kSummaryRoots; ++i) {
    int pid = roots[i];
    std::string text = Plural("session", poll.forest.nodes.at(pid).blocked_total) +
                       " blocked by pid " + std::to_string(pid);
    std::string state = poll.StateOf(pid);
    if (!state.empty()) text += " (" + state + ")";
    lines.push_back({text, "locks"});
  }
  if (roots.size() > kSummaryRoots) {
    lines.push_back({Plural("more blocking session", roots.size() - kSummaryRoots), "locks"});
  }
  for (const auto& cycle : poll.forest.cycles) {
    std::string text = "wait cycle (a deadlock not yet detected):";
    for (int pid : cycle.pids) text += " " + std::to_string(pid);
    lines.push_back({text, "locks"});
  }
}

bool FeedsAnInvariant(const PageModel& model, const std::string& check) {
  return std::any_of(model.invariants.begin(), model.invariants.end(),
                     [&check](const InvariantView& view) { return view.check == check; });
}

}  // namespace

std::string KeyNoun(const std::vector<metrics::Violation>& keys, size_t count) {
  std::string label;
  for (const auto& violation : keys) {
    if (violation.labels.size() != 1 || (!label.empty() && label != violation.labels[0].name)) {
      return Plural("key", count);
    }
    label = violation.labels[0].name;
  }
  const std::string kId = "_id";
  if (label.size() <= kId.size() ||
      label.compare(label.size() - kId.size(), kId.size(), kId) != 0) {
    return Plural("key", count);
  }
  return Plural(label.substr(0, label.size() - kId.size()), count);
}

std::vector<SummaryLine> SummarizeProblems(const PageModel& model) {
  std::vector<SummaryLine> lines;
  for (const auto& view : model.invariants) {
    if (view.verdict == Verdict::kViolated)
      lines.push_back({ViolatedLine(view), "invariant-" + view.name});
  }
  for (const auto& view : model.invariants) {
    if (view.verdict == Verdict::kUnknown) {
      lines.push_back({view.name + ": no verdict (" + view.reason + ")", "invariant-" + view.name});
    }
  }
  if (model.locks) AddBlocking(lines, *model.locks);
  for (const auto& check : model.checks) {
    if (check.has_run && !check.success && !FeedsAnInvariant(model, check.name)) {
      lines.push_back({"check " + check.name + " failing: " + check.last_reason, "checks"});
    }
  }
  return lines;
}

}  // namespace seatwatch::page
