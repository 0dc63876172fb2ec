#include "locks/blocking_forest.h"

#include <algorithm>

#include "locks/wait_graph.h"

namespace seatwatch::locks {

namespace {

void AddUnique(std::vector<int>& list, int pid) {
  if (std::find(list.begin(), list.end(), pid) == list.end()) list.push_back(pid);
}

// Turns pg_blocking_pids() answers into whom each session really waits for.
class Collapser {
 public:
  Collapser(const std::vector<Waiter>& waiters, const std::set<int>& live_pids) {
    for (const auto& waiter : waiters) waiting_.emplace(waiter.pid, &waiter);
    for (const auto& waiter : waiters) {
      std::vector<int>& alive = live_blockers_[waiter.pid];
      for (int blocker : waiter.blockers) {
        bool known = blocker == 0 || live_pids.count(blocker) || waiting_.count(blocker);
        if (known && blocker != waiter.pid) AddUnique(alive, blocker);
      }
    }
  }

  WaitGraph Run() {
    WaitGraph graph;
    for (const auto& [pid, waiter] : waiting_) graph[pid] = Effective(pid);
    return graph;
  }

  std::map<std::string, RowQueue>& rows() { return rows_; }

 private:
  const std::vector<int>& Effective(int pid) {
    auto done = effective_.find(pid);
    if (done != effective_.end()) return done->second;
    in_progress_.insert(pid);
    std::vector<int> result = Collapse(pid);
    in_progress_.erase(pid);
    std::sort(result.begin(), result.end());
    return effective_[pid] = std::move(result);
  }

  std::vector<int> Collapse(int pid) {
    const Waiter& waiter = *waiting_.at(pid);
    const std::vector<int>& raw = live_blockers_.at(pid);
    if (!waiter.row_lock) return raw;
    // Sessions ahead in the same tuple-lock queue are no blockers of their
    // own: the one holding the tuple lock is.
    std::vector<int> heads;
    for (int blocker : raw) {
      auto it = waiting_.find(blocker);
      bool peer = it != waiting_.end() && it->second->row_lock &&
                  it->second->target == waiter.target;
      if (!peer) heads.push_back(blocker);
    }
    if (heads.empty()) return raw;  // the holder ended meanwhile; the peers are all we know
    RowQueue& queue = rows_[waiter.target];
    queue.target = waiter.target;
    AddUnique(queue.queued, pid);
    std::vector<int> result;
    for (int head : heads) {
      AddUnique(queue.heads, head);
      if (!waiting_.count(head) || in_progress_.count(head)) {
        AddUnique(result, head);
        continue;
      }
      // The head holds the tuple lock only while it waits for the row's
      // locker: that locker is whom the whole queue waits for. If the head
      // waits for this very session, it is a real cycle: keep the head.
      const std::vector<int>& behind = Effective(head);
      bool cycle = std::find(behind.begin(), behind.end(), pid) != behind.end();
      if (behind.empty() || cycle) {
        AddUnique(result, head);
      } else {
        for (int blocker : behind) AddUnique(result, blocker);
      }
    }
    return result;
  }

  std::map<int, const Waiter*> waiting_;
  WaitGraph live_blockers_;
  WaitGraph effective_;
  std::set<int> in_progress_;
  std::map<std::string, RowQueue> rows_;
};

}  // namespace

Forest BuildForest(const std::vector<Waiter>& waiters, const std::set<int>& live_pids) {
  Collapser collapser(waiters, live_pids);
  WaitGraph graph = collapser.Run();
  Forest forest;
  WaitGraph waited_by;  // reversed: pid -> the sessions waiting for it
  for (const auto& [pid, blockers] : graph) {
    ForestNode& node = forest.nodes[pid];
    node.pid = pid;
    node.waiting = true;
    node.blocked_by = blockers;
    for (int blocker : blockers) {
      forest.nodes[blocker].pid = blocker;
      waited_by[blocker].push_back(pid);
    }
  }
  for (const auto& [pid, node] : forest.nodes) graph.try_emplace(pid);  // blockers: no edges

  std::map<int, size_t> component_of;
  std::vector<std::vector<int>> components = StronglyConnected(graph);
  for (size_t c = 0; c < components.size(); ++c) {
    for (int pid : components[c]) component_of[pid] = c;
  }
  // Sinks come first, so every blocker outside a component has its depth.
  for (const auto& members : components) {
    for (int pid : members) {
      ForestNode& node = forest.nodes[pid];
      for (int blocker : node.blocked_by) {
        if (component_of[blocker] == component_of[pid]) continue;
        int depth = forest.nodes[blocker].depth + 1;
        if (depth > node.depth) {  // ties keep the lowest pid
          node.depth = depth;
          node.parent = blocker;
        }
      }
    }
    // A cycle's members share one depth: that of its deepest way out.
    int shared = 0;
    for (int pid : members) shared = std::max(shared, forest.nodes[pid].depth);
    for (int pid : members) forest.nodes[pid].depth = shared;
  }

  std::vector<int> behind = CountBehind(waited_by, components);
  for (auto& [pid, node] : forest.nodes) {
    size_t c = component_of[pid];
    node.blocked_directly = static_cast<int>(waited_by[pid].size());
    // In a cycle the other members wait for this one too.
    node.blocked_total = behind[c] + static_cast<int>(components[c].size()) - 1;
    if (node.parent >= 0) forest.nodes[node.parent].children.push_back(pid);
    forest.max_depth = std::max(forest.max_depth, node.depth);
  }
  for (auto& [pid, node] : forest.nodes) std::sort(node.children.begin(), node.children.end());

  for (size_t c = 0; c < components.size(); ++c) {
    const std::vector<int>& members = components[c];
    const ForestNode& first = forest.nodes[members[0]];
    if (members.size() > 1) {
      forest.cycles.push_back({members, behind[c]});
      continue;
    }
    if (!first.blocked_by.empty()) continue;
    if (first.blocked_directly > 0) {
      forest.roots.push_back(first.pid);
      forest.max_blocked_by_one_root =
          std::max(forest.max_blocked_by_one_root, first.blocked_total);
    } else {
      forest.unattributed.push_back(first.pid);
    }
  }
  std::sort(forest.roots.begin(), forest.roots.end(), [&](int a, int b) {
    int ta = forest.nodes[a].blocked_total;
    int tb = forest.nodes[b].blocked_total;
    return ta != tb ? ta > tb : a < b;
  });
  std::sort(forest.unattributed.begin(), forest.unattributed.end());

  for (auto& [target, queue] : collapser.rows()) {
    for (int pid : queue.heads) forest.nodes[pid].row_target = target;
    for (int pid : queue.queued) forest.nodes[pid].row_target = target;
    std::sort(queue.heads.begin(), queue.heads.end());
    std::sort(queue.queued.begin(), queue.queued.end());
    forest.hot_row_waiters = std::max(forest.hot_row_waiters, queue.size());
    forest.rows.push_back(std::move(queue));
  }
  std::stable_sort(forest.rows.begin(), forest.rows.end(),
                   [](const RowQueue& a, const RowQueue& b) { return a.size() > b.size(); });
  return forest;
}

}  // namespace seatwatch::locks
