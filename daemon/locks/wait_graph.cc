#include "locks/wait_graph.h"

#include <algorithm>
#include <cstdint>
#include <set>

namespace seatwatch::locks {

// Tarjan's algorithm, iterative: a long chain must not exhaust the stack.
std::vector<std::vector<int>> StronglyConnected(const WaitGraph& graph) {
  std::map<int, int> index;
  std::map<int, int> low;
  std::set<int> on_stack;
  std::vector<int> stack;
  std::vector<std::vector<int>> components;
  int next_index = 0;
  for (const auto& [start, unused] : graph) {
    if (index.count(start)) continue;
    std::vector<std::pair<int, size_t>> frames{{start, 0}};
    index[start] = low[start] = next_index++;
    stack.push_back(start);
    on_stack.insert(start);
    while (!frames.empty()) {
      auto& [node, edge] = frames.back();
      const std::vector<int>& out = graph.at(node);
      if (edge < out.size()) {
        int next = out[edge++];
        if (!index.count(next)) {
          index[next] = low[next] = next_index++;
          stack.push_back(next);
          on_stack.insert(next);
          frames.emplace_back(next, 0);
        } else if (on_stack.count(next)) {
          low[node] = std::min(low[node], index[next]);
        }
        continue;
      }
      int finished = node;
      frames.pop_back();
      if (!frames.empty()) {
        int caller = frames.back().first;
        low[caller] = std::min(low[caller], low[finished]);
      }
      if (low[finished] != index[finished]) continue;
      std::vector<int> component;
      int member;
      do {
        member = stack.back();
        stack.pop_back();
        on_stack.erase(member);
        component.push_back(member);
      } while (member != finished);
      std::sort(component.begin(), component.end());
      components.push_back(std::move(component));
    }
  }
  return components;
}

std::vector<int> CountBehind(const WaitGraph& waited_by,
                             const std::vector<std::vector<int>>& components) {
  std::map<int, size_t> index;
  std::vector<size_t> component_of;
  for (size_t c = 0; c < components.size(); ++c) {
    for (int pid : components[c]) {
      index[pid] = component_of.size();
      component_of.push_back(c);
    }
  }
  // One bit per session: who is behind each component. Waiters come later in
  // the sinks-first order, so walking it backwards finds theirs done.
  const size_t words = (component_of.size() + 63) / 64;
  std::vector<std::vector<std::uint64_t>> behind(components.size(),
                                                 std::vector<std::uint64_t>(words, 0));
  std::vector<int> counts(components.size(), 0);
  for (size_t c = components.size(); c-- > 0;) {
    std::vector<std::uint64_t>& bits = behind[c];
    for (int pid : components[c]) {
      auto waiters = waited_by.find(pid);
      if (waiters == waited_by.end()) continue;
      for (int waiter : waiters->second) {
        size_t i = index.at(waiter);
        size_t from = component_of[i];
        if (from == c) continue;
        for (size_t w = 0; w < words; ++w) bits[w] |= behind[from][w];
        bits[i / 64] |= std::uint64_t{1} << (i % 64);
      }
    }
    for (std::uint64_t word : bits) counts[c] += __builtin_popcountll(word);
  }
  return counts;
}

}  // namespace seatwatch::locks
