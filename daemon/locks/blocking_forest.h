#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

namespace seatwatch::locks {

// One session waiting on a heavyweight lock, as the forest needs it.
struct Waiter {
  int pid = 0;
  // Identifies the awaited lock (every field of its lock tag): sessions with
  // equal targets stand in one queue.
  std::string target;
  // The awaited lock is a row's tuple lock (pg_locks.locktype = 'tuple').
  bool row_lock = false;
  // pg_blocking_pids() of this session, read after `target`.
  std::vector<int> blockers;
};

// Sessions queued for one row: the heads hold its tuple lock (normally one,
// waiting for the transaction that locked the row), `queued` wait for the
// tuple lock behind them.
struct RowQueue {
  std::string target;
  std::vector<int> heads;
  std::vector<int> queued;
  int size() const { return static_cast<int>(heads.size() + queued.size()); }
};

struct ForestNode {
  int pid = 0;
  bool waiting = false;
  // Whom this session waits for, after collapsing row queues; sorted.
  std::vector<int> blocked_by;
  // 0 for roots, cycle members without outside blockers and waiters whose
  // blocker vanished; otherwise 1 + the depth of its deepest blocker.
  int depth = 0;
  // The blocker it is drawn under (its deepest one), or -1.
  int parent = -1;
  std::vector<int> children;  // sorted
  int blocked_directly = 0;   // sessions that wait for this one
  int blocked_total = 0;      // sessions that wait for it, directly or not
  std::string row_target;     // the row it queues for (head or queued), if any
};

// A wait cycle: a deadlock the server has not detected yet.
struct Cycle {
  std::vector<int> pids;  // sorted
  int blocked_total = 0;  // sessions outside the cycle held up by it
};

struct Forest {
  std::map<int, ForestNode> nodes;  // every waiter and every blocker
  // Sessions that block others and wait for nobody known, sorted by
  // blocked_total (largest first), then pid.
  std::vector<int> roots;
  std::vector<Cycle> cycles;
  // Waiters whose blockers all ended between the two reads, blocking nobody.
  std::vector<int> unattributed;
  std::vector<RowQueue> rows;  // largest first
  int max_depth = 0;
  int max_blocked_by_one_root = 0;
  int hot_row_waiters = 0;  // size of the largest row queue
};

// Builds the blocking forest from the waiters. Blockers not in `live_pids`
// ended between the read of the sessions and the read of the locks and are
// dropped (pid 0, a prepared transaction, is always kept).
//
// A queue on one row is one level: PostgreSQL reports W1 -> [R], W2 -> [W1],
// W3 -> [W1, W2] when R holds a row, W1 took its tuple lock and waits for R's
// transaction and W2, W3 queue on the tuple lock. Sessions ahead in the same
// tuple-lock queue are dropped from a waiter's blockers, and a queue head is
// replaced by whom it waits for, so W1, W2 and W3 all wait for R at depth 1.
// Queues on other locks (a table lock behind a pending ALTER TABLE) are real
// chains and stay as reported.
//
// Pure (no state, no I/O): safe to call from any thread. Cycles terminate.
Forest BuildForest(const std::vector<Waiter>& waiters, const std::set<int>& live_pids);

}  // namespace seatwatch::locks
