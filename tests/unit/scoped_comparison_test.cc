#include "checks/scoped_comparison.h"

#include <gtest/gtest.h>

namespace seatwatch::checks {
namespace {

using Cell = db::Rows::Cell;

// The shipped booking_reconciliation entry, as far as the proof reads it.
config::QueryConfig Entry() {
  config::QueryConfig entry;
  entry.name = "booking_reconciliation";
  entry.labels = {"event_id"};
  entry.value = "violations";
  entry.invariant_column = "invariant";
  entry.key = "event_id";
  entry.expiry_column = "next_expiry_unix";
  return entry;
}

// Rows of (event_id, invariant, violations, next_expiry_unix, note): `note`
// is a column the entry does not map.
db::Rows Result(const std::vector<std::vector<Cell>>& values) {
  db::Rows rows;
  rows.columns = {"event_id", "invariant", "violations", "next_expiry_unix", "note"};
  rows.values = values;
  return rows;
}

std::vector<Cell> Row(Cell key, const std::string& invariant, const std::string& count,
                      Cell expiry = {}, Cell note = {}) {
  return {std::move(key), invariant, count, std::move(expiry), std::move(note)};
}

db::Rows Full() {
  return Result({
      Row("1", "sold_seat_without_ticket", "0"),
      Row("1", "fan_over_limit", "2", "1700000000"),
      Row("2", "sold_seat_without_ticket", "3"),
      Row("2", "sold_seat_without_ticket", "3"),  // a duplicate counts twice
      Row("3", "sold_seat_without_ticket", "1"),
      Row({}, "keyless", "9"),
  });
}

TEST(ScopedComparisonTest, ComparesLabelsValueInvariantAndExpiryOnce) {
  config::QueryConfig entry = Entry();
  entry.labels = {"event_id", "kind"};
  EXPECT_EQ(ComparedColumns(entry), (std::vector<std::string>{"event_id", "kind", "violations",
                                                              "invariant", "next_expiry_unix"}));
  entry.invariant_column.clear();
  entry.expiry_column.clear();
  EXPECT_EQ(ComparedColumns(entry), (std::vector<std::string>{"event_id", "kind", "violations"}));
}

TEST(ScopedComparisonTest, SamplesDistinctKeysSpreadFromFirstToLast) {
  db::Rows rows = Result({});
  for (int i = 10; i < 30; ++i) {
    rows.values.push_back(Row(std::to_string(i), "x", "1"));
    rows.values.push_back(Row(std::to_string(i), "y", "1"));
  }
  rows.values.push_back(Row({}, "x", "1"));
  EXPECT_EQ(SampleKeys(rows, "event_id", 5),
            (std::vector<std::string>{"10", "14", "19", "24", "29"}));
  EXPECT_EQ(SampleKeys(rows, "event_id", 1), (std::vector<std::string>{"10"}));
  // Integers by value, not as text; other keys after them.
  db::Rows mixed = Result({});
  for (const char* key : {"b", "12", "3", "007", "a", "100", "9"}) {
    mixed.values.push_back(Row(std::string(key), "x", "1"));
  }
  EXPECT_EQ(SampleKeys(mixed, "event_id", 7),
            (std::vector<std::string>{"3", "9", "12", "007", "100", "a", "b"}));
  EXPECT_EQ(SampleKeys(mixed, "event_id", 3), (std::vector<std::string>{"3", "007", "b"}));
  EXPECT_EQ(SampleKeys(Full(), "event_id", 5), (std::vector<std::string>{"1", "2", "3"}));
  EXPECT_TRUE(SampleKeys(Full(), "no_such_column", 5).empty());
  EXPECT_TRUE(SampleKeys(Result({Row({}, "x", "1")}), "event_id", 5).empty());
}

TEST(ScopedComparisonTest, NoKeysMustGiveNoRows) {
  EXPECT_EQ(RowsForNoKeys(Entry(), Result({})), std::nullopt);
  auto problem = RowsForNoKeys(Entry(), Full());
  ASSERT_TRUE(problem);
  EXPECT_EQ(*problem,
            "with no keys ($1 = '{}') it returns 6 rows (the first of event_id = '1'): it must "
            "return only rows of the keys in $1, e.g. WHERE event_id = ANY ($1::int[])");
}

TEST(ScopedComparisonTest, TheSameRowsOfTheKeysInAnyOrderAgree) {
  db::Rows scoped = Result({
      Row("3", "sold_seat_without_ticket", "1", {}, "other text"),  // note is not compared
      Row("1", "fan_over_limit", "2", "1700000000"),
      Row("1", "sold_seat_without_ticket", "0"),
  });
  EXPECT_EQ(ScopedRowsDiffer(Entry(), Full(), scoped, {"1", "3"}), std::nullopt);
  // Its columns in another order, by name.
  db::Rows reordered;
  reordered.columns = {"violations", "invariant", "event_id", "next_expiry_unix"};
  reordered.values = {{"1", "sold_seat_without_ticket", "3", {}}};
  EXPECT_EQ(ScopedRowsDiffer(Entry(), Full(), reordered, {"3"}), std::nullopt);
  // A key with no rows in either.
  EXPECT_EQ(ScopedRowsDiffer(Entry(), Full(), Result({}), {"7"}), std::nullopt);
}

TEST(ScopedComparisonTest, ARowOfAKeyNotAskedForIsNamed) {
  db::Rows scoped = Result({Row("1", "sold_seat_without_ticket", "0"),
                            Row("2", "sold_seat_without_ticket", "3")});
  EXPECT_EQ(ScopedRowsDiffer(Entry(), Full(), scoped, {"1"}),
            "it returned a row of event_id = '2', a key it was not asked for (asked for '1')");
  db::Rows keyless = Result({Row({}, "keyless", "9")});
  EXPECT_EQ(ScopedRowsDiffer(Entry(), Full(), keyless, {"1", "3"}),
            "it returned a row of event_id = NULL, a key it was not asked for (asked for '1', "
            "'3')");
}

TEST(ScopedComparisonTest, ADifferentValueNamesTheKeyAndBothRows) {
  db::Rows scoped = Result({Row("1", "sold_seat_without_ticket", "0"),
                            Row("1", "fan_over_limit", "2", "1700000000"),
                            Row("3", "sold_seat_without_ticket", "2")});
  EXPECT_EQ(ScopedRowsDiffer(Entry(), Full(), scoped, {"1", "3"}),
            "for event_id = '3' it returns 1 row where sql returns 1 on the same snapshot; "
            "sql's row (event_id = '3', violations = '1', invariant = 'sold_seat_without_ticket', "
            "next_expiry_unix = NULL) is missing; its row (event_id = '3', violations = '2', "
            "invariant = 'sold_seat_without_ticket', next_expiry_unix = NULL) is not one of "
            "sql's");
}

TEST(ScopedComparisonTest, MissingAndDuplicatedRowsAndTheExpiryCount) {
  // One of the two identical rows of key 2 only.
  db::Rows half = Result({Row("2", "sold_seat_without_ticket", "3")});
  EXPECT_EQ(ScopedRowsDiffer(Entry(), Full(), half, {"2"}),
            "for event_id = '2' it returns 1 row where sql returns 2 on the same snapshot; "
            "sql's row (event_id = '2', violations = '3', invariant = 'sold_seat_without_ticket', "
            "next_expiry_unix = NULL) is missing");
  // A row too many.
  db::Rows twice = Result({Row("3", "sold_seat_without_ticket", "1"),
                           Row("3", "sold_seat_without_ticket", "1")});
  auto problem = ScopedRowsDiffer(Entry(), Full(), twice, {"3"});
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("returns 2 rows where sql returns 1"), std::string::npos) << *problem;
  EXPECT_NE(problem->find("is not one of sql's"), std::string::npos) << *problem;
  // No rows where sql has some.
  problem = ScopedRowsDiffer(Entry(), Full(), Result({}), {"3"});
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("for event_id = '3' it returns 0 rows where sql returns 1"),
            std::string::npos)
      << *problem;
  // The expiry column is compared too: a recheck at the wrong moment.
  db::Rows late = Result({Row("1", "sold_seat_without_ticket", "0"),
                          Row("1", "fan_over_limit", "2", "1700000060")});
  problem = ScopedRowsDiffer(Entry(), Full(), late, {"1"});
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("next_expiry_unix = '1700000060') is not one of sql's"),
            std::string::npos)
      << *problem;
}

TEST(ScopedComparisonTest, AMissingColumnAndHostileTextAreSaidPlainly) {
  db::Rows scoped;
  scoped.columns = {"event_id", "invariant", "next_expiry_unix"};
  EXPECT_EQ(ScopedRowsDiffer(Entry(), Full(), scoped, {"1"}),
            "it returns no column violations, which sql returns");
  db::Rows hostile = Result({Row("1\x1b[31m" + std::string(100, 'x'), "a", "1")});
  auto problem = ScopedRowsDiffer(Entry(), Full(), hostile, {"1"});
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->find('\x1b'), std::string::npos) << *problem;
  EXPECT_NE(problem->find("'1\\x1b[31mxxx"), std::string::npos) << *problem;
  EXPECT_NE(problem->find("x...'"), std::string::npos) << *problem;
}

}  // namespace
}  // namespace seatwatch::checks
