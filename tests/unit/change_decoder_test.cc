#include "changes/change_decoder.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "changes/pgoutput_error.h"
#include "changes/pgoutput_parser.h"
#include "unit/pgoutput_captures.h"

namespace seatwatch::changes {
namespace {

using seatwatch::testing::CapturedMessage;
using seatwatch::testing::LoadCapture;
using seatwatch::testing::MessageBuilder;
using Keys = std::map<std::string, std::set<std::string>>;
using Tables = std::map<std::string, std::string>;
using KeysList = std::vector<Keys>;

const Tables kBooking = {
    {"seats", "event_id"}, {"tickets", "event_id"}, {"payments", "event_id"}};

void FeedAll(ChangeDecoder& decoder, const std::vector<CapturedMessage>& messages) {
  for (const CapturedMessage& m : messages) decoder.Feed(m.bytes);
}

// A decoder of `tables` that has read every message.
ChangeDecoder Decoded(const std::vector<CapturedMessage>& messages,
                      const Tables& tables = kBooking) {
  ChangeDecoder decoder(tables);
  FeedAll(decoder, messages);
  return decoder;
}

ChangeDecoder Decoded(const std::string& capture, const Tables& tables = kBooking) {
  return Decoded(LoadCapture(capture), tables);
}

// The keys of each transaction committed since the last take, in order.
KeysList CommittedKeys(ChangeDecoder& decoder) {
  KeysList keys;
  for (const TransactionChanges& changes : decoder.TakeCommitted()) keys.push_back(changes.keys);
  return keys;
}

// The xids of the Begin rows, in order.
std::vector<std::uint32_t> BeginXids(const std::vector<CapturedMessage>& messages) {
  std::vector<std::uint32_t> xids;
  for (const CapturedMessage& m : messages) {
    if (m.bytes[0] == 'B') xids.push_back(m.xid);
  }
  return xids;
}

TEST(ChangeDecoderTest, InsertsYieldTheNewKeysWithTheXid) {
  std::vector<CapturedMessage> m = LoadCapture("insert");
  ChangeDecoder decoder = Decoded(m);
  std::vector<TransactionChanges> committed = decoder.TakeCommitted();
  ASSERT_EQ(committed.size(), 1u);
  EXPECT_EQ(committed[0].xid, m[0].xid);
  EXPECT_EQ(committed[0].keys, (Keys{{"seats", {"7"}}, {"tickets", {"7"}}, {"payments", {"7"}}}));
  EXPECT_EQ(decoder.unmappable(), "");
  EXPECT_EQ(decoder.decoded_changes(), 4u);
  EXPECT_TRUE(decoder.TakeCommitted().empty());
}

// A ticket and a payment moved from event 8 to 9 and 7: both events are
// dirty, from the old key (K) and the new row.
TEST(ChangeDecoderTest, UpdatesYieldOldAndNewKeys) {
  std::vector<CapturedMessage> m = LoadCapture("update");
  ChangeDecoder decoder = Decoded(m);
  std::vector<TransactionChanges> committed = decoder.TakeCommitted();
  ASSERT_EQ(committed.size(), 4u);
  std::vector<std::uint32_t> xids = BeginXids(m);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(committed[i].xid, xids[i]) << i;
  EXPECT_EQ(committed[0].keys, (Keys{{"seats", {"7"}}}));
  EXPECT_EQ(committed[1].keys, (Keys{{"tickets", {"7"}}}));
  EXPECT_EQ(committed[2].keys, (Keys{{"tickets", {"8", "9"}}}));
  EXPECT_EQ(committed[3].keys, (Keys{{"payments", {"7", "8"}}}));
  EXPECT_EQ(decoder.unmappable(), "");
  EXPECT_EQ(decoder.decoded_changes(), 4u);
}

TEST(ChangeDecoderTest, DeletesYieldTheOldKey) {
  ChangeDecoder decoder = Decoded("delete");
  EXPECT_EQ(CommittedKeys(decoder), (KeysList{{{"tickets", {"7"}}}, {{"payments", {"7"}}}}));
  EXPECT_EQ(decoder.unmappable(), "");
}

// payments under REPLICA IDENTITY DEFAULT: an update without an old tuple
// may have moved the row (event_id is not in the identity), a delete
// carries only idempotency_key. Both are unmappable; the transactions still
// come out with their xids (a full pass must see them).
TEST(ChangeDecoderTest, DefaultIdentityMakesUpdateAndDeleteUnmappable) {
  std::vector<CapturedMessage> m = LoadCapture("delete_default");
  ChangeDecoder decoder(kBooking);
  for (std::size_t i = 0; i < 4; ++i) decoder.Feed(m[i].bytes);
  EXPECT_EQ(decoder.unmappable(),
            "update on payments: replica identity DEFAULT does not carry event_id");
  decoder.ClearUnmappable();
  EXPECT_EQ(decoder.unmappable(), "");
  for (std::size_t i = 4; i < m.size(); ++i) decoder.Feed(m[i].bytes);
  EXPECT_EQ(decoder.unmappable(),
            "delete on payments: replica identity DEFAULT does not carry event_id");
  std::vector<TransactionChanges> committed = decoder.TakeCommitted();
  ASSERT_EQ(committed.size(), 2u);
  EXPECT_EQ(committed[0].xid, m[0].xid);
  EXPECT_EQ(committed[0].keys, (Keys{{"payments", {"7"}}}));  // the new row's, at least
  EXPECT_EQ(committed[1].xid, m[4].xid);
  EXPECT_EQ(committed[1].keys, Keys{});
}

TEST(ChangeDecoderTest, FirstUnmappableReasonIsKept) {
  std::vector<CapturedMessage> m = LoadCapture("delete_default");
  ChangeDecoder decoder = Decoded(m);
  EXPECT_EQ(decoder.unmappable(),
            "update on payments: replica identity DEFAULT does not carry event_id");
}

TEST(ChangeDecoderTest, IdentityFullYieldsOldKeys) {
  ChangeDecoder decoder = Decoded("identity_full");
  EXPECT_EQ(CommittedKeys(decoder), (KeysList{{{"payments", {"7"}}},
                                              {{"payments", {"7", "8"}}},
                                              {{"payments", {"8"}}}}));
  EXPECT_EQ(decoder.unmappable(), "");
}

using ByKey = std::map<std::string, std::set<TransactionChanges::Identity>>;
using Identities = std::map<std::string, TransactionChanges::TableIdentities>;
const std::vector<std::string> kSeatId = {"event_id", "seat"};
const std::vector<std::string> kPaymentId = {"idempotency_key", "event_id"};

// Which rows each transaction changed, by their replica identity: seats
// under their primary key (DEFAULT), tickets and payments under an index.
// A row that moved (ticket 8/B7 to 9/B1, payment pay-2 from event 8 to 7)
// is named by its old identity under the old key and its new one under the
// new key.
TEST(ChangeDecoderTest, EachChangedRowIsNamedByItsReplicaIdentity) {
  ChangeDecoder decoder = Decoded("update");
  std::vector<TransactionChanges> committed = decoder.TakeCommitted();
  ASSERT_EQ(committed.size(), 4u);
  for (const auto& t : committed) EXPECT_TRUE(t.identities_complete);
  EXPECT_EQ(committed[0].identities, (Identities{{"seats", {kSeatId, ByKey{{"7", {{"7", "A1"}}}}}}}));
  EXPECT_EQ(committed[1].identities, (Identities{{"tickets", {kSeatId, ByKey{{"7", {{"7", "A2"}}}}}}}));
  EXPECT_EQ(committed[2].identities,
            (Identities{{"tickets", {kSeatId, ByKey{{"8", {{"8", "B7"}}}, {"9", {{"9", "B1"}}}}}}}));
  EXPECT_EQ(committed[3].identities,
            (Identities{{"payments", {kPaymentId, ByKey{{"8", {{"pay-2", "8"}}}, {"7", {{"pay-2", "7"}}}}}}}));
  EXPECT_EQ(committed[2].identity_count, 2u);
}

TEST(ChangeDecoderTest, InsertsAndDeletesNameTheirRows) {
  std::vector<TransactionChanges> inserted = Decoded("insert").TakeCommitted();
  ASSERT_EQ(inserted.size(), 1u);
  EXPECT_TRUE(inserted[0].identities_complete);
  EXPECT_EQ(inserted[0].identities.at("tickets").by_key.at("7").size(), 1u);
  EXPECT_EQ(inserted[0].identity_count, 4u);
  std::vector<TransactionChanges> deleted = Decoded("delete").TakeCommitted();
  ASSERT_EQ(deleted.size(), 2u);
  EXPECT_EQ(deleted[1].identities, (Identities{{"payments", {kPaymentId, ByKey{{"7", {{"pay-1", "7"}}}}}}}));
}

// Under REPLICA IDENTITY FULL the old row is every column: it names no
// single row, so the transactions say their keys only.
TEST(ChangeDecoderTest, AnIdentityThatNamesNoSingleRowLeavesTheIdentitiesIncomplete) {
  std::vector<TransactionChanges> committed = Decoded("identity_full").TakeCommitted();
  ASSERT_EQ(committed.size(), 3u);
  EXPECT_TRUE(committed[0].identities_complete);  // the insert, before FULL
  for (std::size_t i = 1; i < 3; ++i) {
    EXPECT_FALSE(committed[i].identities_complete) << i;
    EXPECT_TRUE(committed[i].identities.empty()) << i;
  }
  // A TRUNCATE names no row at all.
  std::vector<TransactionChanges> truncated = Decoded("truncate").TakeCommitted();
  ASSERT_EQ(truncated.size(), 2u);
  for (const auto& t : truncated) EXPECT_FALSE(t.identities_complete);
}

TEST(ChangeDecoderTest, TruncateOfAWatchedTableIsUnmappable) {
  std::vector<CapturedMessage> m = LoadCapture("truncate");
  ChangeDecoder decoder = Decoded(m);
  EXPECT_EQ(decoder.unmappable(), "truncate on tickets");
  std::vector<TransactionChanges> committed = decoder.TakeCommitted();
  ASSERT_EQ(committed.size(), 2u);
  EXPECT_EQ(committed[0].xid, BeginXids(m)[0]);
  EXPECT_EQ(committed[1].xid, BeginXids(m)[1]);
  EXPECT_EQ(decoder.decoded_changes(), 2u);

  ChangeDecoder payments_only = Decoded(m, Tables{{"payments", "event_id"}});
  EXPECT_EQ(payments_only.unmappable(), "truncate on payments");
  EXPECT_EQ(payments_only.TakeCommitted().size(), 1u);
}

// The 2 MB ticket: its update moves it to another seat; the fan is
// unchanged TOAST, the key comes from the old key and the new row.
TEST(ChangeDecoderTest, TwoMegabyteRowYieldsItsKey) {
  ChangeDecoder decoder = Decoded("big_row");
  EXPECT_EQ(CommittedKeys(decoder), (KeysList{{{"tickets", {"12"}}}, {{"tickets", {"12"}}}}));
  EXPECT_EQ(decoder.unmappable(), "");
}

// Keyed by the 2 MB column itself: the update's old key 'K' does not hold it
// (not in the identity) and the new row has it as unchanged TOAST.
TEST(ChangeDecoderTest, KeyOutsideTheIdentityIsUnmappable) {
  ChangeDecoder decoder = Decoded("big_row", Tables{{"tickets", "fan"}});
  EXPECT_EQ(decoder.unmappable(),
            "update on tickets: replica identity USING INDEX does not carry fan");
  std::vector<TransactionChanges> committed = decoder.TakeCommitted();
  ASSERT_EQ(committed.size(), 2u);
  ASSERT_EQ(committed[0].keys["tickets"].size(), 1u);
  EXPECT_EQ(committed[0].keys["tickets"].begin()->size(), 65536u * 32);
}

TEST(ChangeDecoderTest, UnwatchedTablesAreCountedNotReturned) {
  std::vector<CapturedMessage> m = LoadCapture("unwatched");
  ChangeDecoder decoder = Decoded(m);
  EXPECT_EQ(CommittedKeys(decoder), (KeysList{{{"seats", {"13"}}}}));
  EXPECT_EQ(decoder.decoded_changes(), 2u);

  ChangeDecoder tickets_only = Decoded(m, Tables{{"tickets", "event_id"}});
  EXPECT_TRUE(tickets_only.TakeCommitted().empty());
  EXPECT_EQ(tickets_only.decoded_changes(), 2u);
}

TEST(ChangeDecoderTest, MessagesAndOriginsAreSkipped) {
  ChangeDecoder decoder = Decoded("messages");
  EXPECT_EQ(CommittedKeys(decoder), (KeysList{{{"seats", {"14"}}}, {{"seats", {"14"}}}}));
  FeedAll(decoder, LoadCapture("origin"));
  EXPECT_EQ(CommittedKeys(decoder), (KeysList{{{"seats", {"15"}}}}));
}

TEST(ChangeDecoderTest, SchemaQualifiedNamesMatchExactly) {
  std::vector<CapturedMessage> m = LoadCapture("insert");
  ChangeDecoder qualified(Tables{{"public.seats", "event_id"}, {"other.tickets", "event_id"}});
  FeedAll(qualified, m);
  EXPECT_EQ(CommittedKeys(qualified), (KeysList{{{"public.seats", {"7"}}}}));
  EXPECT_TRUE(TableNameMatches("seats", "archive", "seats"));
  EXPECT_TRUE(TableNameMatches("archive.seats", "archive", "seats"));
  EXPECT_FALSE(TableNameMatches("archive.seats", "public", "seats"));
  EXPECT_FALSE(TableNameMatches("seat", "public", "seats"));
}

TEST(ChangeDecoderTest, ChangeOfAnUnannouncedRelationThrows) {
  std::vector<CapturedMessage> m = LoadCapture("insert");
  ChangeDecoder decoder(kBooking);
  decoder.Feed(m[0].bytes);  // Begin, then the Insert without its Relation
  try {
    decoder.Feed(m[2].bytes);
    ADD_FAILURE() << "fed";
  } catch (const PgoutputError& e) {
    std::uint32_t oid = std::get<RelationMessage>(ParsePgoutputMessage(m[1].bytes)).oid;
    EXPECT_EQ(std::string(e.what()), "pgoutput Insert of relation OID " + std::to_string(oid) +
                                         ", which no Relation message announced");
  }
  // After Reset the relation must be announced again.
  ChangeDecoder reset(kBooking);
  FeedAll(reset, m);
  reset.Reset();
  reset.Feed(m[0].bytes);
  EXPECT_THROW(reset.Feed(m[2].bytes), PgoutputError);
}

TEST(ChangeDecoderTest, MessagesOutOfOrderThrow) {
  std::vector<CapturedMessage> m = LoadCapture("insert");
  ChangeDecoder decoder(kBooking);
  EXPECT_THROW(decoder.Feed(m.back().bytes), PgoutputError);  // Commit
  decoder.Feed(m[1].bytes);                                    // Relation: anywhere
  EXPECT_THROW(decoder.Feed(m[2].bytes), PgoutputError);      // Insert outside
  decoder.Feed(m[0].bytes);
  EXPECT_THROW(decoder.Feed(m[0].bytes), PgoutputError);      // Begin inside
}

// Hand-made: relation 1, public.t (k, v).
std::string Relation(char identity, bool k_is_key) {
  return MessageBuilder('R').Int32(1).String("public").String("t").Byte(identity).Int16(2)
      .Byte(k_is_key ? 1 : 0).String("k").Int32(23).Int32(-1)
      .Byte(0).String("v").Int32(25).Int32(-1).bytes();
}
std::string Begin(std::int32_t xid) { return MessageBuilder('B').Int64(1).Int64(2).Int32(xid).bytes(); }
std::string Commit() { return MessageBuilder('C').Byte(0).Int64(1).Int64(2).Int64(3).bytes(); }

// A decoder of `tables` that has read Relation('i', true).
ChangeDecoder KnowingT(const Tables& tables) {
  ChangeDecoder decoder(tables);
  decoder.Feed(Relation('i', true));
  return decoder;
}

// Begin, the one change, Commit.
void FeedTransaction(ChangeDecoder& decoder, std::int32_t xid, const std::string& change) {
  decoder.Feed(Begin(xid));
  decoder.Feed(change);
  decoder.Feed(Commit());
}

TEST(ChangeDecoderTest, ANewRelationMessageReplacesTheCachedOne) {
  ChangeDecoder decoder(Tables{{"t", "k"}});
  decoder.Feed(Relation('d', false));
  FeedTransaction(decoder, 41,
                  MessageBuilder('D').Int32(1).Byte('K').Int16(2).Byte('n').Text("x").bytes());
  EXPECT_EQ(decoder.unmappable(), "delete on t: replica identity DEFAULT does not carry k");
  decoder.ClearUnmappable();
  decoder.Feed(Relation('i', true));
  FeedTransaction(decoder, 42,
                  MessageBuilder('D').Int32(1).Byte('K').Int16(2).Text("5").Byte('n').bytes());
  EXPECT_EQ(decoder.unmappable(), "");
  std::vector<TransactionChanges> committed = decoder.TakeCommitted();
  ASSERT_EQ(committed.size(), 2u);
  EXPECT_EQ(committed[0].xid, 41u);
  EXPECT_EQ(committed[0].keys, Keys{});
  EXPECT_EQ(committed[1].xid, 42u);
  EXPECT_EQ(committed[1].keys, (Keys{{"t", {"5"}}}));
}

TEST(ChangeDecoderTest, NullOrUnchangedToastKeysAreUnmappable) {
  auto reason = [](const std::string& change) {
    ChangeDecoder decoder = KnowingT(Tables{{"t", "k"}});
    FeedTransaction(decoder, 7, change);
    return decoder.unmappable();
  };
  EXPECT_EQ(reason(MessageBuilder('I').Int32(1).Byte('N').Int16(2).Byte('n').Text("v").bytes()),
            "insert on t: k is NULL");
  EXPECT_EQ(reason(MessageBuilder('U').Int32(1).Byte('N').Int16(2).Byte('u').Text("v").bytes()),
            "update on t: k is unchanged TOAST with no old value");
  // With the old key, an unchanged key is the old one.
  EXPECT_EQ(reason(MessageBuilder('U').Int32(1).Byte('K').Int16(2).Text("3").Byte('n')
                       .Byte('N').Int16(2).Byte('u').Text("v").bytes()),
            "");
  EXPECT_EQ(reason(MessageBuilder('D').Int32(1).Byte('K').Int16(2).Byte('n').Byte('n').bytes()),
            "delete on t: k is NULL");
  EXPECT_EQ(reason(MessageBuilder('I').Int32(1).Byte('N').Int16(2).Byte('b').Int32(1).Byte(3)
                       .Text("v").bytes()),
            "insert on t: k is in binary form");
}

TEST(ChangeDecoderTest, KeyColumnMissingFromThePublicationIsUnmappable) {
  ChangeDecoder decoder = KnowingT(Tables{{"t", "event_id"}});
  FeedTransaction(decoder, 9,
                  MessageBuilder('I').Int32(1).Byte('N').Int16(2).Text("1").Text("v").bytes());
  EXPECT_EQ(decoder.unmappable(), "insert on t: column event_id is not published");
  EXPECT_EQ(decoder.TakeCommitted().size(), 1u);
}

TEST(ChangeDecoderTest, TupleOfAnotherWidthThrows) {
  ChangeDecoder decoder = KnowingT(Tables{{"t", "k"}});
  decoder.Feed(Begin(9));
  EXPECT_THROW(decoder.Feed(MessageBuilder('I').Int32(1).Byte('N').Int16(1).Text("1").bytes()),
               PgoutputError);
  ChangeDecoder unwatched = KnowingT(Tables{{"other", "k"}});
  unwatched.Feed(Begin(9));
  EXPECT_THROW(unwatched.Feed(MessageBuilder('U').Int32(1).Byte('N').Int16(3).Text("1")
                                  .Text("2").Text("3").bytes()),
               PgoutputError);
}

// Hand-made: relation `oid`, schema.name (event_id, seat), the key flagged.
std::string NamedRelation(std::int32_t oid, const std::string& schema, const std::string& name) {
  return MessageBuilder('R').Int32(oid).String(schema).String(name).Byte('i').Int16(2)
      .Byte(1).String("event_id").Int32(23).Int32(-1)
      .Byte(1).String("seat").Int32(25).Int32(-1).bytes();
}

std::map<std::uint32_t, CoveredRelation> Verified() {
  return {{100, CoveredRelation{100, "public", "seats", "r1/2"}},
          {200, CoveredRelation{200, "public", "tickets", "r3/4"}}};
}

// A decoder of the booking tables, Verified(), that has read `relation`.
ChangeDecoder VerifiedAfter(const std::string& relation) {
  ChangeDecoder decoder(kBooking, Verified());
  decoder.Feed(relation);
  return decoder;
}

TEST(ChangeDecoderTest, VerifiedRelationsUnderTheirNamesAreNoChangeOfCoverage) {
  ChangeDecoder decoder(kBooking, Verified());
  decoder.Feed(NamedRelation(200, "public", "tickets"));
  decoder.Feed(NamedRelation(300, "public", "filler"));  // not watched, not verified
  FeedTransaction(decoder, 7,
                  MessageBuilder('I').Int32(200).Byte('N').Int16(2).Text("4").Text("s1").bytes());
  EXPECT_EQ(decoder.coverage_change(), "");
  EXPECT_EQ(CommittedKeys(decoder), (KeysList{{{"tickets", {"4"}}}}));
}

// pgoutput names relations by OID: a watched table renamed away keeps its
// OID, and its changes come under the new name (not watched by name).
TEST(ChangeDecoderTest, AVerifiedRelationUnderAnotherNameIsAChangeOfCoverage) {
  ChangeDecoder decoder = VerifiedAfter(NamedRelation(200, "public", "tickets_away"));
  EXPECT_EQ(decoder.coverage_change(),
            "public.tickets (OID 200) was renamed to public.tickets_away (in the changes "
            "decoded)");
  // The first change is kept.
  decoder.Feed(NamedRelation(100, "archive", "seats"));
  EXPECT_NE(decoder.coverage_change().find("public.tickets"), std::string::npos);
}

TEST(ChangeDecoderTest, AWatchedNameUnderAnOidNotVerifiedIsAChangeOfCoverage) {
  EXPECT_EQ(VerifiedAfter(NamedRelation(201, "public", "tickets")).coverage_change(),
            "changes of public.tickets come from OID 201, not from a relation verified for "
            "the watched tables");
}

TEST(ChangeDecoderTest, WithoutVerifiedRelationsNothingIsChecked) {
  ChangeDecoder decoder(kBooking);
  decoder.Feed(NamedRelation(201, "public", "tickets"));
  EXPECT_EQ(decoder.coverage_change(), "");
}

}  // namespace
}  // namespace seatwatch::changes
