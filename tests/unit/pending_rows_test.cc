// Which rows the pending transactions changed, by key and replica identity,
// until a recheck's snapshot sees them; a transaction that did not name all
// its rows makes its keys unknown; a new slot forgets everything.
#include "checks/pending_rows.h"

#include <gtest/gtest.h>

namespace seatwatch::checks {
namespace {

using changes::ChangeBatch;
using changes::TransactionChanges;

TransactionChanges Sale(std::uint32_t xid, const std::string& event, const std::string& seat) {
  TransactionChanges t;
  t.xid = xid;
  t.keys["seats"] = {event};
  t.keys["tickets"] = {event};
  t.identities["seats"] = {{"event_id", "seat"}, {{event, {{event, seat}}}}};
  t.identities["tickets"] = {{"event_id", "seat"}, {{event, {{event, seat}}}}};
  return t;
}

ChangeBatch Batch(std::uint64_t generation, std::vector<TransactionChanges> transactions) {
  ChangeBatch batch;
  batch.feed_up = true;
  batch.generation = generation;
  batch.transactions = std::move(transactions);
  return batch;
}

TEST(PendingRowsTest, VisibleTransactionsNameTheirRowsByKey) {
  PendingRows pending({"seats", "tickets"});
  EXPECT_FALSE(pending.Accept(Batch(1, {})));  // the first batch of a slot starts the line
  EXPECT_TRUE(pending.Accept(Batch(1, {Sale(10, "7", "A1"), Sale(11, "7", "A2"),
                                        Sale(12, "8", "B1")})));
  PendingRows::Dirty dirty = pending.Of({10, 12});
  EXPECT_TRUE(dirty.unknown.empty());
  EXPECT_EQ(dirty.rows.at("7"), (PendingRows::RowSet{{"seats", {{"7", "A1"}}},
                                                     {"tickets", {{"7", "A1"}}}}));
  EXPECT_EQ(dirty.rows.at("8").at("seats").size(), 1u);
  EXPECT_EQ(dirty.columns.at("seats"), (std::vector<std::string>{"event_id", "seat"}));
  pending.Settle({10, 12});
  EXPECT_EQ(pending.transactions(), 1u);
  EXPECT_EQ(pending.Of({11}).rows.at("7").at("seats"),
            (std::set<PendingRows::Identity>{{"7", "A2"}}));
}

TEST(PendingRowsTest, ATransactionThatDidNotNameItsRowsMakesItsKeysUnknown) {
  PendingRows pending({"seats", "tickets"});
  pending.Accept(Batch(1, {}));
  TransactionChanges full = Sale(20, "7", "A1");
  full.identities_complete = false;
  full.identities.clear();
  TransactionChanges keys_only = Sale(21, "9", "C1");
  keys_only.identities.erase("tickets");  // its tickets' rows not named
  EXPECT_TRUE(pending.Accept(Batch(1, {full, keys_only})));
  PendingRows::Dirty dirty = pending.Of({20, 21});
  EXPECT_EQ(dirty.unknown, (std::set<std::string>{"7", "9"}));
  EXPECT_TRUE(dirty.rows.empty());
  // A change the feed could not map: the batch breaks the line.
  ChangeBatch unmappable = Batch(1, {Sale(22, "7", "A3")});
  unmappable.unmappable = "truncate on tickets";
  EXPECT_FALSE(pending.Accept(unmappable));
  EXPECT_EQ(pending.Of({22}).unknown, std::set<std::string>{"7"});
}

TEST(PendingRowsTest, ANewSlotForgetsWhatWasPending) {
  PendingRows pending({"seats", "tickets"});
  pending.Accept(Batch(1, {Sale(30, "7", "A1")}));
  EXPECT_EQ(pending.transactions(), 1u);
  EXPECT_FALSE(pending.Accept(Batch(2, {})));
  EXPECT_EQ(pending.transactions(), 0u);
  ChangeBatch down;
  EXPECT_FALSE(pending.Accept(down));
  // Tables the entry does not watch are not its business.
  PendingRows seats_only({"seats"});
  seats_only.Accept(Batch(1, {}));
  seats_only.Accept(Batch(1, {Sale(31, "7", "A1")}));
  EXPECT_EQ(seats_only.Of({31}).rows.at("7").count("tickets"), 0u);
}

}  // namespace
}  // namespace seatwatch::checks
