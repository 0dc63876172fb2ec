#include "checks/incremental_source.h"

#include <gtest/gtest.h>

#include "checks/invariant_check.h"
#include "checks/metric_check.h"

namespace seatwatch::checks {
namespace {

using namespace std::chrono_literals;

config::QueryConfig Entry() {
  config::QueryConfig entry;
  entry.name = "booking_reconciliation";
  entry.sql = "SELECT 1";
  entry.scoped_sql = "SELECT 1 WHERE $1 IS NOT NULL";
  entry.labels = {"event_id"};
  entry.value = "violations";
  entry.params = {"4"};
  entry.key = "event_id";
  entry.tables = {{"seats", "event_id"}};
  entry.invariants = {"booking_reconciliation"};
  return entry;
}

changes::ChangeBatch Batch() {
  changes::ChangeBatch batch;
  batch.feed_up = true;
  batch.generation = 1;
  changes::TransactionChanges txn;
  txn.xid = 77;
  txn.keys["seats"] = {"3"};
  batch.transactions = {txn};
  return batch;
}

const IncrementalSettings kSettings{1s, 1h};

TEST(IncrementalSourceTest, ReloadOfTheSameEntryKeepsTheState) {
  IncrementalSource old(Entry(), kSettings);
  old.AcceptChanges(Batch(), changes::ResyncReason::kStartup);
  ASSERT_EQ(old.state().pending_transactions(), 1u);
  IncrementalSource fresh(Entry(), IncrementalSettings{2s, 2h});
  EXPECT_TRUE(fresh.TakeStateFrom(old));
  EXPECT_EQ(fresh.state().pending_transactions(), 1u);
  EXPECT_TRUE(fresh.state().feed_up());
}

TEST(IncrementalSourceTest, ReloadOfAChangedEntryStartsOver) {
  IncrementalSource old(Entry(), kSettings);
  old.AcceptChanges(Batch(), changes::ResyncReason::kStartup);
  config::QueryConfig changed = Entry();
  changed.scoped_sql += " AND true";
  IncrementalSource fresh(changed, kSettings);
  EXPECT_FALSE(fresh.TakeStateFrom(old));
  EXPECT_EQ(fresh.state().pending_transactions(), 0u);
  EXPECT_EQ(old.state().pending_transactions(), 1u);
}

TEST(IncrementalSourceTest, ChecksAreIncrementalOnlyWithSettingsAndScopedSql) {
  InvariantCheck plain(Entry(), 10s);
  EXPECT_FALSE(plain.wants_changes());
  EXPECT_FALSE(plain.incremental_status());
  EXPECT_EQ(plain.interval(), 10s);
  config::QueryConfig full_only = Entry();
  full_only.scoped_sql.clear();
  EXPECT_FALSE(InvariantCheck(full_only, 10s, kSettings).wants_changes());

  InvariantCheck invariant(Entry(), 10s, kSettings);
  EXPECT_TRUE(invariant.wants_changes());
  ASSERT_TRUE(invariant.incremental_status());
  EXPECT_EQ(invariant.incremental_status()->mode, "full");
  EXPECT_EQ(invariant.incremental_status()->full_passes.size(), 7u);
  // Not seeded yet: its own interval.
  EXPECT_EQ(invariant.interval(), 10s);

  config::QueryConfig metric_entry = Entry();
  metric_entry.kind = config::QueryConfig::Kind::kMetric;
  metric_entry.invariants.clear();
  MetricCheck metric(metric_entry, 10s, kSettings);
  EXPECT_TRUE(metric.wants_changes());
  metric.AcceptChanges(Batch(), changes::ResyncReason::kStartup);
  MetricCheck reloaded(metric_entry, 10s, kSettings);
  reloaded.TakeStateFrom(metric);
  EXPECT_TRUE(reloaded.wants_changes());
}

}  // namespace
}  // namespace seatwatch::checks
