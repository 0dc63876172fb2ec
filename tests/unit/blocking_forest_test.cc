// The blocking forest from hand-made pg_blocking_pids() answers.
#include "locks/blocking_forest.h"

#include <gtest/gtest.h>

namespace seatwatch::locks {
namespace {

using Pids = std::vector<int>;

// A session waiting for a transaction (the first waiter of a row, or any
// other non-row wait).
Waiter OnXact(int pid, std::vector<int> blockers, const std::string& xid = "") {
  return {pid, "transactionid|" + (xid.empty() ? std::to_string(pid) : xid), false,
          std::move(blockers)};
}

// A session queued for a row's tuple lock.
Waiter OnRow(int pid, const std::string& row, std::vector<int> blockers) {
  return {pid, "tuple|seats|" + row, true, std::move(blockers)};
}

std::set<int> Live(std::initializer_list<int> pids) { return std::set<int>(pids); }

TEST(BlockingForestTest, EmptyInputGivesEmptyForest) {
  Forest forest = BuildForest({}, {});
  EXPECT_TRUE(forest.nodes.empty());
  EXPECT_TRUE(forest.roots.empty());
  EXPECT_TRUE(forest.cycles.empty());
  EXPECT_EQ(forest.max_depth, 0);
  EXPECT_EQ(forest.max_blocked_by_one_root, 0);
  EXPECT_EQ(forest.hot_row_waiters, 0);
}

TEST(BlockingForestTest, OneRootOneWaiter) {
  Forest forest = BuildForest({OnXact(20, {10})}, Live({10, 20}));
  EXPECT_EQ(forest.roots, (Pids{10}));
  EXPECT_EQ(forest.max_depth, 1);
  EXPECT_EQ(forest.nodes.at(20).depth, 1);
  EXPECT_EQ(forest.nodes.at(20).parent, 10);
  EXPECT_TRUE(forest.nodes.at(20).waiting);
  EXPECT_FALSE(forest.nodes.at(10).waiting);
  EXPECT_EQ(forest.nodes.at(10).blocked_directly, 1);
  EXPECT_EQ(forest.nodes.at(10).blocked_total, 1);
  EXPECT_EQ(forest.max_blocked_by_one_root, 1);
  // One waiter for a row shows as a transaction wait: no row queue yet.
  EXPECT_TRUE(forest.rows.empty());
  EXPECT_EQ(forest.hot_row_waiters, 0);
}

// R holds the row; W1 took its tuple lock and waits for R's transaction; W2
// and W3 queue on the tuple lock. PostgreSQL says W1 -> [R], W2 -> [W1],
// W3 -> [W1, W2]: one level, three held up by R.
TEST(BlockingForestTest, QueueOnOneRowIsCollapsedOntoTheHolder) {
  const int r = 100, w1 = 101, w2 = 102, w3 = 103;
  Forest forest = BuildForest({OnXact(w1, {r}), OnRow(w2, "0,1", {w1}), OnRow(w3, "0,1", {w1, w2})},
                              Live({r, w1, w2, w3}));
  EXPECT_EQ(forest.roots, (Pids{r}));
  EXPECT_EQ(forest.max_depth, 1);
  for (int w : {w1, w2, w3}) {
    EXPECT_EQ(forest.nodes.at(w).blocked_by, (Pids{r})) << w;
    EXPECT_EQ(forest.nodes.at(w).depth, 1) << w;
    EXPECT_EQ(forest.nodes.at(w).parent, r) << w;
  }
  EXPECT_EQ(forest.nodes.at(r).children, (Pids{w1, w2, w3}));
  EXPECT_EQ(forest.nodes.at(r).blocked_directly, 3);
  EXPECT_EQ(forest.nodes.at(r).blocked_total, 3);
  EXPECT_EQ(forest.nodes.at(w1).blocked_total, 0);
  EXPECT_EQ(forest.max_blocked_by_one_root, 3);
  ASSERT_EQ(forest.rows.size(), 1u);
  EXPECT_EQ(forest.rows[0].heads, (Pids{w1}));
  EXPECT_EQ(forest.rows[0].queued, (Pids{w2, w3}));
  EXPECT_EQ(forest.hot_row_waiters, 3);
  EXPECT_EQ(forest.nodes.at(w1).row_target, forest.rows[0].target);
  EXPECT_EQ(forest.nodes.at(w3).row_target, forest.rows[0].target);
  EXPECT_TRUE(forest.nodes.at(r).row_target.empty());
}

// R2 holds row X; M holds row Y and waits for X; N waits for Y. A real chain.
TEST(BlockingForestTest, RealChainStaysDepthTwo) {
  const int r2 = 200, m = 201, n = 202;
  Forest forest = BuildForest({OnXact(m, {r2}), OnXact(n, {m})}, Live({r2, m, n}));
  EXPECT_EQ(forest.roots, (Pids{r2}));
  EXPECT_EQ(forest.max_depth, 2);
  EXPECT_EQ(forest.nodes.at(n).depth, 2);
  EXPECT_EQ(forest.nodes.at(n).parent, m);
  EXPECT_EQ(forest.nodes.at(r2).blocked_directly, 1);
  EXPECT_EQ(forest.nodes.at(r2).blocked_total, 2);
  EXPECT_EQ(forest.nodes.at(m).blocked_total, 1);
}

// The same chain with a second session queued for row Y behind N: it waits
// for M (whose transaction N waits for), not for N, and not for R2.
TEST(BlockingForestTest, QueueBehindAChainCollapsesOntoTheMiddle) {
  const int r2 = 200, m = 201, n = 202, n2 = 203;
  Forest forest = BuildForest({OnXact(m, {r2}), OnXact(n, {m}), OnRow(n2, "0,7", {n})},
                              Live({r2, m, n, n2}));
  EXPECT_EQ(forest.max_depth, 2);
  EXPECT_EQ(forest.nodes.at(n2).blocked_by, (Pids{m}));
  EXPECT_EQ(forest.nodes.at(m).blocked_directly, 2);
  EXPECT_EQ(forest.nodes.at(r2).blocked_total, 3);
  EXPECT_EQ(forest.hot_row_waiters, 2);
}

TEST(BlockingForestTest, SeveralRootsSortedByHowManyTheyHoldUp) {
  Forest forest = BuildForest(
      {OnXact(11, {1}), OnXact(21, {2}), OnXact(22, {2}), OnXact(23, {22})}, Live({1, 2}));
  EXPECT_EQ(forest.roots, (Pids{2, 1}));
  EXPECT_EQ(forest.nodes.at(2).blocked_total, 3);
  EXPECT_EQ(forest.nodes.at(2).blocked_directly, 2);
  EXPECT_EQ(forest.nodes.at(1).blocked_total, 1);
  EXPECT_EQ(forest.max_blocked_by_one_root, 3);
  EXPECT_EQ(forest.max_depth, 2);
}

TEST(BlockingForestTest, TransitiveCountsFollowEveryPath) {
  // R <- A <- B <- C, R <- D, and E waits for both C and D.
  const int r = 1, a = 2, b = 3, c = 4, d = 5, e = 6;
  Forest forest = BuildForest({OnXact(a, {r}), OnXact(b, {a}), OnXact(c, {b}), OnXact(d, {r}),
                               OnXact(e, {d, c})},
                              Live({r, a, b, c, d, e}));
  EXPECT_EQ(forest.nodes.at(r).blocked_total, 5);
  EXPECT_EQ(forest.nodes.at(r).blocked_directly, 2);
  EXPECT_EQ(forest.nodes.at(a).blocked_total, 3);
  EXPECT_EQ(forest.nodes.at(d).blocked_total, 1);
  // E is drawn under its deepest blocker, C, at depth 4.
  EXPECT_EQ(forest.nodes.at(e).parent, c);
  EXPECT_EQ(forest.nodes.at(e).depth, 4);
  EXPECT_EQ(forest.max_depth, 4);
}

TEST(BlockingForestTest, CycleIsReportedAndDoesNotHang) {
  const int a = 31, b = 32, c = 33;
  Forest forest =
      BuildForest({OnXact(a, {b}), OnXact(b, {a}), OnXact(c, {a})}, Live({a, b, c}));
  EXPECT_TRUE(forest.roots.empty());
  ASSERT_EQ(forest.cycles.size(), 1u);
  EXPECT_EQ(forest.cycles[0].pids, (Pids{a, b}));
  EXPECT_EQ(forest.cycles[0].blocked_total, 1);
  EXPECT_EQ(forest.nodes.at(c).depth, 1);
  EXPECT_EQ(forest.nodes.at(c).parent, a);
  EXPECT_EQ(forest.nodes.at(a).parent, -1);
  EXPECT_EQ(forest.max_blocked_by_one_root, 0);
}

// W queues for a row whose tuple lock H holds while H waits for W's own
// transaction: collapsing must keep the cycle, not turn it into a self-wait.
TEST(BlockingForestTest, CycleThroughARowQueueHeadIsKept) {
  const int h = 41, w = 42;
  Forest forest = BuildForest({OnXact(h, {w}), OnRow(w, "3,4", {h})}, Live({h, w}));
  ASSERT_EQ(forest.cycles.size(), 1u);
  EXPECT_EQ(forest.cycles[0].pids, (Pids{h, w}));
  EXPECT_EQ(forest.nodes.at(w).blocked_by, (Pids{h}));
}

TEST(BlockingForestTest, LongCycleWithManyWaitersTerminates) {
  std::vector<Waiter> waiters;
  std::set<int> live;
  const int n = 300;
  for (int i = 0; i < n; ++i) {
    waiters.push_back(OnXact(i + 1, {(i + 1) % n + 1}));
    waiters.push_back(OnRow(1000 + i, "9,9", {i + 1, 1000 + (i + 1) % n}));
    live.insert(i + 1);
    live.insert(1000 + i);
  }
  Forest forest = BuildForest(waiters, live);
  ASSERT_FALSE(forest.cycles.empty());
  EXPECT_TRUE(forest.roots.empty());
}

TEST(BlockingForestTest, LongChainIsMeasuredWithoutRunningOutOfStack) {
  std::vector<Waiter> waiters;
  std::set<int> live{1};
  for (int pid = 2; pid <= 3001; ++pid) {
    waiters.push_back(OnXact(pid, {pid - 1}));
    live.insert(pid);
  }
  Forest forest = BuildForest(waiters, live);
  EXPECT_EQ(forest.roots, (Pids{1}));
  EXPECT_EQ(forest.max_depth, 3000);
  EXPECT_EQ(forest.nodes.at(1).blocked_total, 3000);
  EXPECT_EQ(forest.nodes.at(3001).parent, 3000);
}

TEST(BlockingForestTest, WaiterWhoseBlockerVanishedIsUnattributed) {
  // 51 ended between the read of the sessions and pg_blocking_pids().
  Forest forest = BuildForest({OnXact(50, {51})}, Live({50}));
  EXPECT_TRUE(forest.roots.empty());
  EXPECT_EQ(forest.unattributed, (Pids{50}));
  EXPECT_TRUE(forest.nodes.at(50).blocked_by.empty());
  EXPECT_EQ(forest.nodes.count(51), 0u);
  EXPECT_EQ(forest.max_depth, 0);
}

TEST(BlockingForestTest, WaiterWithVanishedBlockerStillRootsItsOwnWaiters) {
  Forest forest = BuildForest({OnXact(50, {51}), OnXact(52, {50})}, Live({50, 52}));
  EXPECT_EQ(forest.roots, (Pids{50}));
  EXPECT_TRUE(forest.nodes.at(50).waiting);
  EXPECT_TRUE(forest.unattributed.empty());
  EXPECT_EQ(forest.max_depth, 1);
}

TEST(BlockingForestTest, RowQueueWhoseHeadVanishedKeepsThePeers) {
  // The head (60) ended; 62 still names 61 ahead of it in the queue.
  Forest forest = BuildForest({OnRow(61, "1,1", {60}), OnRow(62, "1,1", {60, 61})}, Live({61, 62}));
  EXPECT_TRUE(forest.unattributed.empty());
  EXPECT_EQ(forest.roots, (Pids{61}));
  EXPECT_EQ(forest.nodes.at(62).blocked_by, (Pids{61}));
}

TEST(BlockingForestTest, QueueOnATableLockIsARealChain) {
  // A reads a table, B's ALTER TABLE waits for A, C's read queues behind B.
  Forest forest = BuildForest({{2, "relation|t", false, {1}}, {3, "relation|t", false, {2}}},
                              Live({1, 2, 3}));
  EXPECT_EQ(forest.max_depth, 2);
  EXPECT_EQ(forest.nodes.at(3).blocked_by, (Pids{2}));
  EXPECT_TRUE(forest.rows.empty());
}

TEST(BlockingForestTest, PreparedTransactionIsARootWithPidZero) {
  Forest forest = BuildForest({OnXact(70, {0})}, Live({70}));
  EXPECT_EQ(forest.roots, (Pids{0}));
  EXPECT_EQ(forest.nodes.at(70).depth, 1);
}

TEST(BlockingForestTest, TwoHotRowsLargestFirst) {
  Forest forest = BuildForest({OnXact(81, {80}), OnRow(82, "0,1", {81}), OnXact(91, {90}),
                               OnRow(92, "0,2", {91}), OnRow(93, "0,2", {91, 92})},
                              Live({80, 81, 82, 90, 91, 92, 93}));
  ASSERT_EQ(forest.rows.size(), 2u);
  EXPECT_EQ(forest.rows[0].size(), 3);
  EXPECT_EQ(forest.rows[1].size(), 2);
  EXPECT_EQ(forest.hot_row_waiters, 3);
  EXPECT_EQ(forest.roots, (Pids{90, 80}));
}

}  // namespace
}  // namespace seatwatch::locks
