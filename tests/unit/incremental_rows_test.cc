#include "checks/incremental_rows.h"

#include <gtest/gtest.h>

#include "db/failure.h"

namespace seatwatch::checks {
namespace {

using Cell = db::Rows::Cell;
using namespace std::chrono_literals;

// Rows of (event_id, invariant, violations, next_expiry_unix).
db::Rows Result(const std::vector<std::vector<Cell>>& values) {
  db::Rows rows;
  rows.columns = {"event_id", "invariant", "violations", "next_expiry_unix"};
  rows.values = values;
  return rows;
}

std::vector<Cell> Row(Cell key, const std::string& invariant, int count, Cell expiry = {}) {
  return {std::move(key), invariant, std::to_string(count), std::move(expiry)};
}

IncrementalRows MakeRows() {
  return IncrementalRows("event_id", "next_expiry_unix", {"seats", "tickets"}, 1h);
}

changes::ChangeBatch Batch(std::uint64_t generation,
                           std::vector<changes::TransactionChanges> transactions = {}) {
  changes::ChangeBatch batch;
  batch.feed_up = true;
  batch.generation = generation;
  batch.transactions = std::move(transactions);
  return batch;
}

changes::TransactionChanges Txn(std::uint32_t xid, const std::string& table,
                                std::set<std::string> keys) {
  changes::TransactionChanges txn;
  txn.xid = xid;
  txn.keys[table] = std::move(keys);
  return txn;
}

// Seeds generation 1 with a full pass at t = 1000.
void Seed(IncrementalRows& rows, db::Rows result) {
  rows.AcceptChanges(Batch(1), changes::ResyncReason::kStartup);
  RunPlan plan = rows.Plan(1000);
  ASSERT_TRUE(plan.full);
  ASSERT_EQ(plan.reason, FullPassReason::kStartup);
  rows.ApplyFull(std::move(result));
  rows.FullPassDone(plan, {}, true, 1000, 0.5);
  ASSERT_TRUE(rows.seeded());
}

std::vector<std::string> Keys(const db::Rows& rows) {
  std::vector<std::string> keys;
  for (const auto& row : rows.values) keys.push_back(row[0].value_or("NULL") + ":" + *row[1]);
  return keys;
}

TEST(IncrementalRowsTest, FullPassIndexesByKeyInKeyOrder) {
  IncrementalRows rows = MakeRows();
  rows.ApplyFull(Result({Row("9", "a", 1), Row("10", "a", 2), Row({}, "b", 3), Row("9", "b", 4)}));
  EXPECT_EQ(Keys(*rows.rows()),
            (std::vector<std::string>{"NULL:b", "10:a", "9:a", "9:b"}));
  EXPECT_EQ(rows.key_count(), 2u);
}

TEST(IncrementalRowsTest, RecheckReplacesEveryRowOfItsKeysAndCleansKeysWithoutRows) {
  IncrementalRows rows = MakeRows();
  rows.ApplyFull(Result({Row("1", "a", 1), Row("1", "b", 1), Row("2", "a", 5), Row("3", "a", 7)}));
  // Key 1 now has one row, key 2 none (clean), key 4 is new; key 3 untouched.
  rows.ApplyRecheck({"1", "2", "4"}, Result({Row("4", "a", 9), Row("1", "b", 2)}));
  EXPECT_EQ(Keys(*rows.rows()), (std::vector<std::string>{"1:b", "3:a", "4:a"}));
  EXPECT_EQ(*rows.rows()->values[0][2], "2");
}

TEST(IncrementalRowsTest, RecheckMapsColumnsByName) {
  IncrementalRows rows = MakeRows();
  rows.ApplyFull(Result({Row("1", "a", 1)}));
  db::Rows reordered;
  reordered.columns = {"violations", "next_expiry_unix", "extra", "invariant", "event_id"};
  reordered.values = {{"6", std::nullopt, "x", "c", "1"}};
  rows.ApplyRecheck({"1"}, reordered);
  ASSERT_EQ(rows.rows()->values.size(), 1u);
  EXPECT_EQ(rows.rows()->columns, Result({}).columns);
  EXPECT_EQ(rows.rows()->values[0], Row("1", "c", 6));
}

TEST(IncrementalRowsTest, MismatchesThrowAndLeaveTheResult) {
  IncrementalRows rows = MakeRows();
  db::Rows no_key;
  no_key.columns = {"invariant", "violations", "next_expiry_unix"};
  EXPECT_THROW(rows.ApplyFull(no_key), IncrementalMismatch);
  EXPECT_FALSE(rows.has_result());
  rows.ApplyFull(Result({Row("1", "a", 1)}));
  EXPECT_THROW(rows.ApplyRecheck({"1"}, Result({Row("2", "a", 1)})), IncrementalMismatch);
  EXPECT_THROW(rows.ApplyRecheck({"1"}, Result({Row({}, "a", 1)})), IncrementalMismatch);
  db::Rows missing;
  missing.columns = {"event_id", "invariant", "violations"};
  EXPECT_THROW(rows.ApplyRecheck({"1"}, missing), IncrementalMismatch);
  EXPECT_THROW(rows.ApplyFull(Result({Row("1", "a", 1, "soon")})), db::DataError);
  EXPECT_EQ(Keys(*rows.rows()), (std::vector<std::string>{"1:a"}));
}

TEST(IncrementalRowsTest, FeedUnseenOrDownMeansFullPasses) {
  IncrementalRows rows = MakeRows();
  RunPlan plan = rows.Plan(1000);
  EXPECT_TRUE(plan.full);
  EXPECT_EQ(plan.reason, FullPassReason::kFeedDown);
  changes::ChangeBatch down;
  rows.AcceptChanges(down, changes::ResyncReason::kStartup);
  EXPECT_EQ(rows.Plan(1000).reason, FullPassReason::kFeedDown);
  rows.ApplyFull(Result({}));
  rows.FullPassDone(rows.Plan(1000), {}, true, 1000, 1);
  EXPECT_FALSE(rows.seeded());
  EXPECT_EQ(rows.Status().mode, "full");
  EXPECT_EQ(rows.Status().full_passes.at("feed_down"), 1u);
  EXPECT_EQ(rows.Status().full_passes.size(), 7u);
  EXPECT_EQ(rows.Status().full_passes.at("startup"), 0u);
}

TEST(IncrementalRowsTest, PendingXidsBecomeDirtyKeysOnlyWhenVisible) {
  IncrementalRows rows = MakeRows();
  Seed(rows, Result({Row("1", "a", 1), Row("2", "a", 1)}));
  rows.AcceptChanges(Batch(1, {Txn(100, "seats", {"1"}), Txn(101, "tickets", {"2", "3"}),
                               Txn(102, "payments", {"9"})}),
                     changes::ResyncReason::kStartup);
  RunPlan plan = rows.Plan(1001);
  ASSERT_FALSE(plan.full);
  // 102 touched a table this entry does not watch.
  EXPECT_EQ(plan.pending_xids, (std::vector<std::uint32_t>{100, 101}));
  // The snapshot sees 100 only: 101 stays pending, its keys not rechecked.
  std::set<std::string> dirty = rows.DirtyKeys({100}, 1001);
  EXPECT_EQ(dirty, (std::set<std::string>{"1"}));
  rows.ApplyRecheck(dirty, Result({Row("1", "a", 0)}));
  rows.RecheckDone(dirty, {100});
  EXPECT_EQ(rows.pending_transactions(), 1u);
  EXPECT_EQ(rows.Status().dirty_keys, 1u);
  EXPECT_EQ(rows.Plan(1002).pending_xids, (std::vector<std::uint32_t>{101}));
  dirty = rows.DirtyKeys({101}, 1002);
  EXPECT_EQ(dirty, (std::set<std::string>{"2", "3"}));
  rows.ApplyRecheck(dirty, Result({Row("3", "b", 4)}));
  rows.RecheckDone(dirty, {101});
  EXPECT_EQ(rows.pending_transactions(), 0u);
  EXPECT_EQ(Keys(*rows.rows()), (std::vector<std::string>{"1:a", "3:b"}));
  EXPECT_TRUE(rows.DirtyKeys({}, 1003).empty());
}

TEST(IncrementalRowsTest, FailedRecheckKeepsItsKeysDirty) {
  IncrementalRows rows = MakeRows();
  Seed(rows, Result({Row("1", "a", 1)}));
  rows.AcceptChanges(Batch(1, {Txn(7, "seats", {"1", "2"})}), changes::ResyncReason::kStartup);
  std::set<std::string> dirty = rows.DirtyKeys({7}, 1001);
  rows.RecheckFailed(dirty, {7});
  EXPECT_EQ(rows.pending_transactions(), 0u);
  EXPECT_EQ(rows.carried(), (std::set<std::string>{"1", "2"}));
  // Next cycle: no xid, still the same keys.
  RunPlan plan = rows.Plan(1002);
  EXPECT_FALSE(plan.full);
  EXPECT_TRUE(plan.pending_xids.empty());
  dirty = rows.DirtyKeys({}, 1002);
  EXPECT_EQ(dirty, (std::set<std::string>{"1", "2"}));
  rows.ApplyRecheck(dirty, Result({}));
  rows.RecheckDone(dirty, {});
  EXPECT_TRUE(rows.carried().empty());
  EXPECT_TRUE(rows.rows()->values.empty());
}

TEST(IncrementalRowsTest, ExpiryMakesAKeyDirtyWhenItsMomentPasses) {
  IncrementalRows rows = MakeRows();
  Seed(rows, Result({Row("1", "held", 2, "1500.5"), Row("1", "sold", 1, "1200"),
                     Row("2", "held", 1, {}), Row("3", "held", 1, "1100")}));
  EXPECT_EQ(rows.next_expiry("1"), 1200);
  EXPECT_EQ(rows.next_expiry("2"), 0);
  EXPECT_TRUE(rows.DirtyKeys({}, 1099).empty());
  EXPECT_EQ(rows.DirtyKeys({}, 1100), (std::set<std::string>{"3"}));
  EXPECT_EQ(rows.DirtyKeys({}, 1250), (std::set<std::string>{"1", "3"}));
  // The recheck of 1 returns its next moment; 3 has no hold left.
  rows.ApplyRecheck({"1", "3"}, Result({Row("1", "held", 1, "1500.5"), Row("3", "expired", 1)}));
  rows.RecheckDone({"1", "3"}, {});
  EXPECT_EQ(rows.next_expiry("1"), 1500.5);
  EXPECT_EQ(rows.next_expiry("3"), 0);
  EXPECT_TRUE(rows.DirtyKeys({}, 1300).empty());
  EXPECT_EQ(rows.DirtyKeys({}, 1501), (std::set<std::string>{"1"}));
  // A failed recheck keeps the expiry: still due.
  rows.RecheckFailed({"1"}, {});
  EXPECT_EQ(rows.DirtyKeys({}, 1502), (std::set<std::string>{"1"}));
}

TEST(IncrementalRowsTest, NewGenerationClearsPendingAndDemandsASeedingFullPass) {
  IncrementalRows rows = MakeRows();
  Seed(rows, Result({Row("1", "a", 1)}));
  rows.AcceptChanges(Batch(1, {Txn(5, "seats", {"1"})}), changes::ResyncReason::kStartup);
  rows.RecheckFailed({"4"}, {});
  changes::ChangeBatch next = Batch(2, {Txn(9, "seats", {"2"})});
  next.creation_xids = {700, 701};
  rows.AcceptChanges(next, changes::ResyncReason::kSlotLost);
  EXPECT_FALSE(rows.seeded());
  EXPECT_TRUE(rows.carried().empty());
  RunPlan plan = rows.Plan(1001);
  EXPECT_TRUE(plan.full);
  EXPECT_EQ(plan.reason, FullPassReason::kResync);
  EXPECT_TRUE(plan.seeds);
  EXPECT_EQ(plan.creation_xids, (std::vector<std::uint64_t>{700, 701}));
  // Only xid 9 of the new generation is pending.
  EXPECT_EQ(plan.pending_xids, (std::vector<std::uint32_t>{9}));
  // Not ready (a creation xid committed but invisible): stays unseeded,
  // and 9, invisible too, stays pending.
  rows.ApplyFull(Result({Row("1", "a", 1)}));
  rows.FullPassDone(plan, {}, false, 1001, 2);
  EXPECT_FALSE(rows.seeded());
  EXPECT_EQ(rows.Status().mode, "full");
  EXPECT_EQ(rows.pending_transactions(), 1u);
  plan = rows.Plan(1002);
  EXPECT_TRUE(plan.full);
  EXPECT_EQ(plan.reason, FullPassReason::kResync);
  rows.ApplyFull(Result({Row("2", "a", 3)}));
  rows.FullPassDone(plan, {9}, true, 1002, 2);
  EXPECT_TRUE(rows.seeded());
  EXPECT_EQ(rows.Status().mode, "incremental");
  EXPECT_EQ(rows.pending_transactions(), 0u);
  EXPECT_EQ(rows.Status().full_passes.at("resync"), 2u);
  EXPECT_EQ(rows.Status().full_passes.at("startup"), 1u);
  EXPECT_EQ(rows.Status().last_full_pass_unix, 1002);
  EXPECT_FALSE(rows.Plan(1003).full);
}

TEST(IncrementalRowsTest, GenerationReasonNamesTheFullPass) {
  IncrementalRows rows = MakeRows();
  Seed(rows, Result({}));
  rows.AcceptChanges(Batch(2), changes::ResyncReason::kDrainCost);
  EXPECT_EQ(rows.Plan(1001).reason, FullPassReason::kDrainCost);
  RunPlan plan = rows.Plan(1001);
  rows.ApplyFull(Result({}));
  rows.FullPassDone(plan, {}, true, 1001, 1);
  rows.AcceptChanges(Batch(3), changes::ResyncReason::kUnmappable);
  EXPECT_EQ(rows.Plan(1002).reason, FullPassReason::kUnmappable);
}

// The feed down because its publication no longer covers a watched table:
// full passes counted as coverage, the status saying why, and the pass that
// seeds the next slot too.
TEST(IncrementalRowsTest, CoverageLostMeansFullPassesForCoverageUntilANewSlotIsSeeded) {
  IncrementalRows rows = MakeRows();
  Seed(rows, Result({}));
  changes::ChangeBatch down;
  down.coverage_lost = "table public.tickets is not in publication seatwatch";
  rows.AcceptChanges(down, changes::ResyncReason::kStartup);
  EXPECT_FALSE(rows.seeded());
  RunPlan plan = rows.Plan(1001);
  EXPECT_TRUE(plan.full);
  EXPECT_EQ(plan.reason, FullPassReason::kCoverage);
  EXPECT_FALSE(plan.seeds);
  rows.ApplyFull(Result({}));
  rows.FullPassDone(plan, {}, true, 1001, 1);
  EXPECT_EQ(rows.Status().mode, "full");
  EXPECT_EQ(rows.Status().mode_reason,
            "coverage lost: table public.tickets is not in publication seatwatch");
  EXPECT_EQ(rows.Status().full_passes.at("coverage"), 1u);
  EXPECT_EQ(rows.Status().full_passes.at("feed_down"), 0u);
  // Whole again: a new slot made for coverage.
  rows.AcceptChanges(Batch(2), changes::ResyncReason::kCoverage);
  EXPECT_EQ(rows.Status().mode_reason, "");
  plan = rows.Plan(1002);
  EXPECT_TRUE(plan.seeds);
  EXPECT_EQ(plan.reason, FullPassReason::kCoverage);
  rows.ApplyFull(Result({}));
  rows.FullPassDone(plan, {}, true, 1002, 1);
  EXPECT_TRUE(rows.seeded());
  EXPECT_EQ(rows.Status().mode, "incremental");
  EXPECT_EQ(rows.Status().full_passes.at("coverage"), 2u);
  // Down for another reason: feed_down, no coverage reason.
  rows.AcceptChanges(changes::ChangeBatch{}, changes::ResyncReason::kStartup);
  EXPECT_EQ(rows.Plan(1003).reason, FullPassReason::kFeedDown);
  EXPECT_EQ(rows.Status().mode_reason, "");
}

TEST(IncrementalRowsTest, FeedDownThenUpAgainIsANewGeneration) {
  IncrementalRows rows = MakeRows();
  Seed(rows, Result({}));
  rows.AcceptChanges(Batch(1, {Txn(5, "seats", {"1"})}), changes::ResyncReason::kStartup);
  rows.AcceptChanges(changes::ChangeBatch{}, changes::ResyncReason::kStartup);
  EXPECT_FALSE(rows.seeded());
  RunPlan plan = rows.Plan(1001);
  EXPECT_EQ(plan.reason, FullPassReason::kFeedDown);
  EXPECT_EQ(plan.pending_xids, (std::vector<std::uint32_t>{5}));
  // Back up, even with the same generation number (a new feed object after
  // a reload counts from 1 again): a new generation, seeded by a full pass
  // that the readiness query allows.
  changes::ChangeBatch up = Batch(1);
  up.creation_xids = {42};
  rows.AcceptChanges(up, changes::ResyncReason::kError);
  plan = rows.Plan(1002);
  EXPECT_TRUE(plan.full);
  EXPECT_TRUE(plan.seeds);
  EXPECT_EQ(plan.reason, FullPassReason::kResync);
  EXPECT_EQ(plan.creation_xids, (std::vector<std::uint64_t>{42}));
}

TEST(IncrementalRowsTest, UnmappableChangeNeedsAFullPassThatSeesItsBatch) {
  IncrementalRows rows = MakeRows();
  Seed(rows, Result({}));
  changes::ChangeBatch batch = Batch(1, {Txn(5, "seats", {}), Txn(6, "seats", {"2"})});
  batch.unmappable = "TRUNCATE of seats";
  rows.AcceptChanges(batch, changes::ResyncReason::kStartup);
  RunPlan plan = rows.Plan(1001);
  EXPECT_TRUE(plan.full);
  EXPECT_EQ(plan.reason, FullPassReason::kUnmappable);
  EXPECT_EQ(plan.pending_xids, (std::vector<std::uint32_t>{5, 6}));
  rows.ApplyFull(Result({}));
  rows.FullPassDone(plan, {6}, true, 1001, 1);  // 5 not visible yet
  EXPECT_EQ(rows.Plan(1002).reason, FullPassReason::kUnmappable);
  rows.FullPassDone(rows.Plan(1002), {5}, true, 1002, 1);
  EXPECT_FALSE(rows.Plan(1003).full);
  EXPECT_EQ(rows.Status().full_passes.at("unmappable"), 2u);
}

TEST(IncrementalRowsTest, BackstopAfterFullPassInterval) {
  IncrementalRows rows = MakeRows();
  Seed(rows, Result({}));
  EXPECT_FALSE(rows.Plan(1000 + 3599).full);
  RunPlan plan = rows.Plan(1000 + 3600);
  EXPECT_TRUE(plan.full);
  EXPECT_EQ(plan.reason, FullPassReason::kBackstop);
  EXPECT_FALSE(plan.seeds);
}

TEST(IncrementalRowsTest, ChangedKeysAreAllAfterAFullPassThenOnlyThoseARecheckChanged) {
  IncrementalRows rows = MakeRows();
  rows.ApplyFull(Result({Row("1", "a", 1), Row("2", "a", 5), Row("3", "a", 7)}));
  EXPECT_EQ(rows.row_count(), 3u);
  IncrementalRows::ChangedKeys changed = rows.TakeChangedKeys();
  EXPECT_TRUE(changed.all);
  changed = rows.TakeChangedKeys();
  EXPECT_FALSE(changed.all);
  EXPECT_TRUE(changed.keys.empty());
  // Key 1 as it was, key 2 gone (clean), key 3 changed, key 4 new, key 5
  // rechecked and still without rows.
  rows.ApplyRecheck({"1", "2", "3", "4", "5"},
                    Result({Row("1", "a", 1), Row("3", "a", 8), Row("4", "b", 1), Row("4", "a", 2)}));
  changed = rows.TakeChangedKeys();
  EXPECT_FALSE(changed.all);
  EXPECT_EQ(changed.keys, (std::set<std::string>{"2", "3", "4"}));
  EXPECT_EQ(rows.row_count(), 4u);
  EXPECT_EQ(rows.key_count(), 3u);
  EXPECT_EQ(rows.rows()->values.size(), rows.row_count());
  EXPECT_TRUE(rows.TakeChangedKeys().keys.empty());
  // A full pass replaces every key, even ones equal to before.
  rows.ApplyFull(Result({Row("1", "a", 1)}));
  rows.ApplyRecheck({"9"}, Result({Row("9", "a", 1)}));
  changed = rows.TakeChangedKeys();
  EXPECT_TRUE(changed.all);
  EXPECT_EQ(rows.row_count(), 2u);
}

TEST(IncrementalRowsTest, ARecheckThatChangesNothingKeepsTheMergedRows) {
  IncrementalRows rows = MakeRows();
  rows.ApplyFull(Result({Row("1", "a", 1), Row("2", "a", 5)}));
  auto merged = rows.rows();
  rows.ApplyRecheck({"1"}, Result({Row("1", "a", 1)}));
  EXPECT_EQ(rows.rows().get(), merged.get());
  rows.ApplyRecheck({"1"}, Result({Row("1", "a", 2)}));
  EXPECT_NE(rows.rows().get(), merged.get());
  EXPECT_EQ(*rows.rows()->values[0][2], "2");
}

}  // namespace
}  // namespace seatwatch::checks
