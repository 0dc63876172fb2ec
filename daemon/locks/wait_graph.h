#pragma once

#include <map>
#include <vector>

namespace seatwatch::locks {

// Who waits for whom: pid -> the pids it waits for (or, reversed, the pids
// waiting for it). Plain functions over it; pure.
using WaitGraph = std::map<int, std::vector<int>>;

// The strongly connected components (a cycle is one component of several
// pids), each sorted. Every pid an edge points to must be a key of `graph`.
// Sinks first: a component comes after every component it waits for.
std::vector<std::vector<int>> StronglyConnected(const WaitGraph& graph);

// For each component of StronglyConnected(), how many sessions outside it
// wait for it, directly or through others, given the reversed graph
// (pid -> the pids waiting for it). Bit sets: linear in the edges times the
// sessions / 64, also for long chains.
std::vector<int> CountBehind(const WaitGraph& waited_by,
                             const std::vector<std::vector<int>>& components);

}  // namespace seatwatch::locks
