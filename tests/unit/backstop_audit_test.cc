#include "checks/backstop_audit.h"

#include <gtest/gtest.h>

#include <memory>

#include "checks/incremental_rows.h"
#include "checks/mismatch_report.h"

namespace seatwatch::checks {
namespace {

using Cell = db::Rows::Cell;
using RowValues = std::vector<Cell>;
using ByKey = std::map<std::string, std::vector<RowValues>>;
using namespace std::chrono_literals;

const std::vector<std::string> kColumns = {"event_id", "invariant", "violations",
                                           "next_expiry_unix"};

RowValues Row(const std::string& key, const std::string& invariant, int count,
              Cell expiry = {}) {
  return {key, invariant, std::to_string(count), std::move(expiry)};
}

db::Rows Result(std::vector<RowValues> values) {
  db::Rows rows;
  rows.columns = kColumns;
  rows.values = std::move(values);
  return rows;
}

std::vector<std::string> KeysOf(const std::vector<KeyDifference>& differences) {
  std::vector<std::string> keys;
  for (const auto& difference : differences) keys.push_back(difference.key);
  return keys;
}

KeyDifference Difference(const std::string& key) {
  return KeyDifference{key, kColumns, {}, {Row(key, "a", 1)}};
}

TEST(DifferingKeysTest, ComparesEachKeysRowsAsAMultisetAndSkipsExcludedKeys) {
  ByKey incremental = {{"1", {Row("1", "a", 1), Row("1", "b", 2)}},
                       {"2", {Row("2", "a", 1)}},
                       {"3", {Row("3", "a", 1)}},
                       {"5", {Row("5", "a", 1)}}};
  ByKey full = {{"1", {Row("1", "b", 2), Row("1", "a", 1)}},  // the same, another order
                {"2", {Row("2", "a", 2)}},                    // another count
                {"4", {Row("4", "a", 1)}},                    // violated only in the full pass
                {"5", {Row("5", "a", 3)}}};                   // differs, but excluded
  auto differences = DifferingKeys(kColumns, incremental, full, {"5"});
  EXPECT_EQ(KeysOf(differences), (std::vector<std::string>{"2", "3", "4"}));
  ASSERT_EQ(differences.size(), 3u);
  EXPECT_EQ(differences[1].incremental, (std::vector<RowValues>{Row("3", "a", 1)}));
  EXPECT_TRUE(differences[1].full.empty()) << "healed in the full pass";
  EXPECT_TRUE(differences[2].incremental.empty());
  EXPECT_EQ(differences[2].columns, kColumns);
  EXPECT_TRUE(DifferingKeys(kColumns, incremental, incremental, {}).empty());
}

TEST(BackstopAuditTest, ASuspectIsConfirmedOnlyOnceTheFeedHasReadPastTheFullPass) {
  BackstopAudit audit;
  audit.Suspect({Difference("7"), Difference("8")}, 5000);
  EXPECT_EQ(audit.suspects(), 2u);
  EXPECT_TRUE(audit.Confirm(0).empty()) << "a batch that does not say how far it read";
  EXPECT_TRUE(audit.Confirm(4999).empty());
  audit.Explain({"8", "9"});
  EXPECT_EQ(audit.suspects(), 1u);
  EXPECT_EQ(KeysOf(audit.Confirm(5000)), (std::vector<std::string>{"7"}));
  EXPECT_EQ(audit.suspects(), 0u);
  EXPECT_TRUE(audit.Confirm(9000).empty()) << "confirmed once";
}

TEST(BackstopAuditTest, ANewBackstopReplacesTheSuspectsAndForgetDropsThem) {
  BackstopAudit audit;
  audit.Suspect({Difference("7")}, 5000);
  audit.Suspect({Difference("8")}, 6000);
  EXPECT_TRUE(audit.Confirm(5500).empty());
  EXPECT_EQ(KeysOf(audit.Confirm(6000)), (std::vector<std::string>{"8"}));
  audit.Suspect({Difference("9")}, 7000);
  audit.Forget();
  EXPECT_TRUE(audit.Confirm(8000).empty());
}

TEST(BackstopAuditTest, HoldsAtMostItsCapAndCountsTheRest) {
  BackstopAudit audit;
  std::vector<KeyDifference> many;
  for (std::size_t i = 0; i < BackstopAudit::kMaxSuspects + 5; ++i) {
    many.push_back(Difference(std::to_string(100000 + i)));
  }
  audit.Suspect(std::move(many), 1);
  EXPECT_EQ(audit.suspects(), BackstopAudit::kMaxSuspects);
  EXPECT_EQ(audit.dropped(), 5u);
  EXPECT_EQ(audit.Confirm(1).size(), BackstopAudit::kMaxSuspects);
}

// The audit inside IncrementalRows: which keys a backstop compares, and how
// the batches after it explain or confirm them.
class IncrementalAuditTest : public ::testing::Test {
 protected:
  // A new state seeded at t = 1000 with violations at 7, 8 (a hold
  // expiring at 1003) and 9.
  void SetUp() override {
    state_ = std::make_unique<IncrementalRows>("event_id", "next_expiry_unix",
                                               std::set<std::string>{"seats", "tickets"}, 1h);
    state().AcceptChanges(Batch({}, 100), changes::ResyncReason::kStartup);
    RunPlan plan = state().Plan(1000);
    ASSERT_EQ(plan.reason, FullPassReason::kStartup);
    state().ApplyFull(Result({Row("7", "a", 1), Row("8", "a", 1, "1003"), Row("9", "a", 1)}));
    state().FullPassDone(plan, {}, true, 1000, 0.1);
    ASSERT_TRUE(state().seeded());
  }

  static changes::ChangeBatch Batch(std::vector<changes::TransactionChanges> transactions,
                                    std::uint64_t complete_through) {
    changes::ChangeBatch batch;
    batch.feed_up = true;
    batch.generation = 1;
    batch.transactions = std::move(transactions);
    batch.complete_through_lsn = complete_through;
    return batch;
  }

  static changes::TransactionChanges Txn(std::uint32_t xid, std::set<std::string> keys,
                                         const std::string& table = "seats") {
    changes::TransactionChanges txn;
    txn.xid = xid;
    txn.keys[table] = std::move(keys);
    return txn;
  }

  // A backstop at t = 1000 + 3600 whose full pass reads `result`; its WAL
  // insert position is 5000.
  void Backstop(db::Rows result) {
    RunPlan plan = state().Plan(4600);
    ASSERT_EQ(plan.reason, FullPassReason::kBackstop);
    state().ApplyFull(std::move(result), 5000, 4600);
    state().FullPassDone(plan, {}, true, 4600, 0.1);
  }

  IncrementalRows& state() { return *state_; }

  std::unique_ptr<IncrementalRows> state_;
};

TEST_F(IncrementalAuditTest, AnUnexplainedDifferenceIsAMismatchOnceTheFeedReadsPastIt) {
  // 7 healed and 10 broke behind the feed's back; 8 (expired by now) and
  // 9 are as they were.
  Backstop(Result({Row("8", "a", 1, "1003"), Row("9", "a", 1), Row("10", "a", 2)}));
  EXPECT_EQ(state().suspected_keys(), 2u);
  state().AcceptChanges(Batch({}, 4000), changes::ResyncReason::kStartup);
  EXPECT_TRUE(state().TakeMismatches().empty()) << "the feed has not read that far yet";
  state().AcceptChanges(Batch({Txn(40, {"99"})}, 5200), changes::ResyncReason::kStartup);
  auto mismatches = state().TakeMismatches();
  ASSERT_EQ(KeysOf(mismatches), (std::vector<std::string>{"10", "7"}));
  EXPECT_EQ(mismatches[1].incremental, (std::vector<RowValues>{Row("7", "a", 1)}));
  EXPECT_TRUE(mismatches[1].full.empty());
  EXPECT_TRUE(state().TakeMismatches().empty()) << "taken once";
  // The full pass's rows stand.
  EXPECT_EQ(state().rows()->values.size(), 3u);
}

TEST_F(IncrementalAuditTest, AChangeHandedOverAfterTheBackstopExplainsItsKey) {
  Backstop(Result({Row("8", "a", 1, "1003"), Row("9", "a", 1)}));
  EXPECT_EQ(state().suspected_keys(), 1u);
  // The transaction that healed 7 committed after the last drain.
  state().AcceptChanges(Batch({Txn(41, {"7"}, "tickets")}, 5200), changes::ResyncReason::kStartup);
  EXPECT_TRUE(state().TakeMismatches().empty());
  EXPECT_EQ(state().suspected_keys(), 0u);
}

TEST_F(IncrementalAuditTest, KeysTheFeedAlreadyNamedAreNotCompared) {
  // 7 is pending (decoded, not rechecked yet), 8's hold expires within
  // the margin of the backstop's clock, 9 was carried by a failed recheck.
  state().AcceptChanges(Batch({Txn(42, {"7"})}, 3000), changes::ResyncReason::kStartup);
  RunPlan plan = state().Plan(2000);
  ASSERT_FALSE(plan.full);
  state().RecheckFailed({"9"}, {});
  RunPlan backstop = state().Plan(1000 + 3600);
  ASSERT_EQ(backstop.reason, FullPassReason::kBackstop);
  state().ApplyFull(Result({Row("8", "a", 2, "4602")}), 5000,
                  1003 - IncrementalRows::kExpiryMarginSeconds);
  EXPECT_EQ(state().suspected_keys(), 0u);
}

TEST_F(IncrementalAuditTest, AnUnmappableBatchANewSlotOrAFeedDownForgetTheSuspects) {
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE(round);
    SetUp();
    Backstop(Result({}));
    ASSERT_EQ(state().suspected_keys(), 2u) << "7 and 9; 8 has expired";
    changes::ChangeBatch batch = Batch({}, 9000);
    if (round == 0) batch.unmappable = "TRUNCATE seats";
    if (round == 1) batch.generation = 2;
    if (round == 2) batch.feed_up = false;
    state().AcceptChanges(batch, changes::ResyncReason::kStartup);
    EXPECT_TRUE(state().TakeMismatches().empty());
    EXPECT_EQ(state().suspected_keys(), 0u);
  }
}

TEST_F(IncrementalAuditTest, OnlyABackstopIsAudited) {
  state().ApplyFull(Result({}));  // e.g. an unmappable change's full pass
  EXPECT_EQ(state().suspected_keys(), 0u);
}

config::QueryConfig Entry(std::vector<std::string> invariants) {
  config::QueryConfig entry;
  entry.name = "booking";
  entry.labels = {"event_id"};
  entry.value = "violations";
  entry.invariant_column = invariants.empty() ? "" : "invariant";
  entry.invariants = std::move(invariants);
  return entry;
}

TEST(JudgeDifferenceTest, AnInvariantEntryIsJudgedByItsViolationsAlone) {
  KeyDifference difference{"7", kColumns,
                           {Row("7", "a", 1, "1003"), Row("7", "b", 2)},
                           {Row("7", "a", 1, "1999"), Row("7", "b", 3), Row("7", "c", 1)}};
  auto judged = JudgeDifference(difference, Entry({"a", "b", "c"}));
  ASSERT_EQ(judged.size(), 2u) << "a differs only in its expiry column";
  EXPECT_EQ(judged.at("b").incremental, "event_id=7 2");
  EXPECT_EQ(judged.at("b").full, "event_id=7 3");
  EXPECT_EQ(judged.at("c").incremental, "none");
  EXPECT_EQ(judged.at("c").full, "event_id=7 1");
}

TEST(JudgeDifferenceTest, AMetricEntryIsJudgedByItsRowsWhole) {
  config::QueryConfig entry = Entry({});
  entry.labels = {"event_id", "invariant"};
  KeyDifference difference{"7", kColumns, {Row("7", "seats_held", 1)}, {}};
  auto judged = JudgeDifference(difference, entry);
  ASSERT_EQ(judged.size(), 1u);
  EXPECT_EQ(judged.at("").incremental,
            "event_id=7 invariant=seats_held violations=1 next_expiry_unix=NULL");
  EXPECT_EQ(judged.at("").full, "none");
}

}  // namespace
}  // namespace seatwatch::checks
