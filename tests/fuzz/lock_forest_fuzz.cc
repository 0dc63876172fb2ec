// The blocking-forest builder, fed random wait graphs: any mix of row-lock
// queues, chains, cycles and vanished blockers. It must terminate without a
// crash and return a forest that is consistent with itself.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "locks/blocking_forest.h"

namespace {

using seatwatch::locks::Forest;
using seatwatch::locks::ForestNode;
using seatwatch::locks::Waiter;

// Names the broken rule before aborting, so that a finding explains itself.
#define Check(ok) \
  ((ok) ? (void)0 : (std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #ok), std::abort()))

void CheckForest(const std::vector<Waiter>& waiters, const Forest& forest) {
  const int n = static_cast<int>(forest.nodes.size());
  for (const auto& waiter : waiters) {
    auto it = forest.nodes.find(waiter.pid);
    Check(it != forest.nodes.end() && it->second.waiting);
  }
  std::set<int> in_cycle;
  for (const auto& cycle : forest.cycles) {
    Check(cycle.pids.size() > 1 && std::is_sorted(cycle.pids.begin(), cycle.pids.end()));
    for (int pid : cycle.pids) Check(forest.nodes.count(pid) && in_cycle.insert(pid).second);
  }
  int max_depth = 0;
  for (const auto& [pid, node] : forest.nodes) {
    Check(node.pid == pid && node.depth >= 0 && node.depth <= n);
    Check(std::is_sorted(node.blocked_by.begin(), node.blocked_by.end()));
    Check(std::is_sorted(node.children.begin(), node.children.end()));
    Check(node.blocked_directly >= 0 && node.blocked_total >= 0);
    max_depth = std::max(max_depth, node.depth);
    for (int child : node.children) Check(forest.nodes.at(child).parent == pid);
    if (node.parent >= 0) {
      const ForestNode& parent = forest.nodes.at(node.parent);
      Check(std::binary_search(node.blocked_by.begin(), node.blocked_by.end(), node.parent));
      Check(std::binary_search(parent.children.begin(), parent.children.end(), pid));
    }
    // Following parents ends at a node drawn at the top.
    int steps = 0;
    for (int at = pid; forest.nodes.at(at).parent >= 0; at = forest.nodes.at(at).parent) {
      Check(++steps <= n);
    }
    if (in_cycle.count(pid)) continue;
    Check(node.blocked_total >= node.blocked_directly);
    if (node.blocked_by.empty()) {
      Check(node.depth == 0 && node.parent == -1);
    } else {
      int deepest = 0;
      for (int blocker : node.blocked_by) deepest = std::max(deepest, forest.nodes.at(blocker).depth);
      Check(node.parent >= 0 && node.depth == deepest + 1);
      Check(node.depth == forest.nodes.at(node.parent).depth + 1);
    }
  }
  Check(forest.max_depth == max_depth);
  for (size_t i = 0; i < forest.roots.size(); ++i) {
    const ForestNode& root = forest.nodes.at(forest.roots[i]);
    Check(root.blocked_by.empty() && root.blocked_directly > 0);
    Check(root.blocked_total <= forest.max_blocked_by_one_root);
    if (i > 0) {
      const ForestNode& before = forest.nodes.at(forest.roots[i - 1]);
      Check(before.blocked_total > root.blocked_total ||
            (before.blocked_total == root.blocked_total && before.pid < root.pid));
    }
  }
  int largest = 0;
  for (size_t i = 0; i < forest.rows.size(); ++i) {
    largest = std::max(largest, forest.rows[i].size());
    if (i > 0) Check(forest.rows[i - 1].size() >= forest.rows[i].size());
  }
  Check(forest.hot_row_waiters == largest);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  constexpr int kMaxPid = 40;  // small, so that pids collide into graphs
  std::vector<Waiter> waiters;
  std::set<int> used;
  int count = in.ConsumeIntegralInRange(0, 24);
  for (int i = 0; i < count && in.remaining_bytes() > 0; ++i) {
    Waiter waiter;
    waiter.pid = in.ConsumeIntegralInRange(1, kMaxPid);
    if (!used.insert(waiter.pid).second) continue;  // one wait per session
    waiter.target = "t" + std::to_string(in.ConsumeIntegralInRange(0, 3));
    waiter.row_lock = in.ConsumeBool();
    int blockers = in.ConsumeIntegralInRange(0, 5);
    for (int b = 0; b < blockers; ++b) waiter.blockers.push_back(in.ConsumeIntegralInRange(0, kMaxPid));
    waiters.push_back(std::move(waiter));
  }
  std::set<int> live;
  for (int pid = 1; pid <= kMaxPid && in.remaining_bytes() > 0; ++pid) {
    if (in.ConsumeBool()) live.insert(pid);
  }
  CheckForest(waiters, seatwatch::locks::BuildForest(waiters, live));
  return 0;
}
