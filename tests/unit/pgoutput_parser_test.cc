#include "changes/pgoutput_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "changes/bytea_text.h"
#include "unit/pgoutput_captures.h"

namespace seatwatch::changes {
namespace {

using seatwatch::testing::CapturedMessage;
using seatwatch::testing::CaptureNames;
using seatwatch::testing::LoadCapture;
using seatwatch::testing::MessageBuilder;

template <typename T>
T As(const CapturedMessage& m) {
  PgoutputMessage parsed = ParsePgoutputMessage(m.bytes);
  EXPECT_TRUE(std::holds_alternative<T>(parsed)) << PgoutputMessageName(parsed);
  return std::get<T>(parsed);
}

std::vector<std::string> Texts(const Tuple& tuple) {
  std::vector<std::string> texts;
  for (const TupleValue& v : tuple) {
    switch (v.kind) {
      case TupleValue::Kind::kText: texts.emplace_back(v.data); break;
      case TupleValue::Kind::kNull: texts.emplace_back("<null>"); break;
      case TupleValue::Kind::kUnchangedToast: texts.emplace_back("<toast>"); break;
      case TupleValue::Kind::kBinary: texts.emplace_back("<binary>"); break;
    }
  }
  return texts;
}

using Strings = std::vector<std::string>;

constexpr std::uint32_t kInt4 = 23;
constexpr std::uint32_t kText = 25;
constexpr std::uint32_t kTimestamptz = 1184;

// The slot's own columns agree with the messages: Begin's xid is the row's
// xid, Begin's final LSN is Commit's LSN, the Commit row's lsn its end LSN.
TEST(PgoutputParserTest, BeginAndCommitMatchTheSlotColumns) {
  std::vector<CapturedMessage> messages = LoadCapture("insert");
  ASSERT_EQ(messages.size(), 9u);
  BeginMessage begin = As<BeginMessage>(messages.front());
  CommitMessage commit = As<CommitMessage>(messages.back());
  EXPECT_EQ(begin.xid, messages.front().xid);
  EXPECT_GT(begin.xid, 700u);
  EXPECT_EQ(begin.final_lsn, commit.commit_lsn);
  EXPECT_EQ(commit.end_lsn, messages.back().lsn);
  EXPECT_GT(commit.end_lsn, commit.commit_lsn);
  EXPECT_EQ(commit.commit_time, begin.commit_time);
  EXPECT_GT(begin.commit_time, 820000000000000);  // after 2026
  EXPECT_EQ(commit.flags, 0);
}

TEST(PgoutputParserTest, RelationsCarryColumnsFlagsAndIdentity) {
  std::vector<CapturedMessage> m = LoadCapture("insert");
  RelationMessage seats = As<RelationMessage>(m[1]);
  EXPECT_EQ(seats.namespace_name, "public");
  EXPECT_EQ(seats.name, "seats");
  EXPECT_EQ(seats.replica_identity, ReplicaIdentity::kDefault);
  ASSERT_EQ(seats.columns.size(), 6u);
  Strings names;
  std::vector<bool> keys;
  std::vector<std::uint32_t> types;
  for (const RelationColumn& c : seats.columns) {
    names.push_back(c.name);
    keys.push_back(c.key);
    types.push_back(c.type_oid);
    EXPECT_EQ(c.type_modifier, -1) << c.name;
  }
  EXPECT_EQ(names, (Strings{"event_id", "seat", "status", "holder", "hold_expires_at", "version"}));
  EXPECT_EQ(keys, (std::vector<bool>{true, true, false, false, false, false}));
  EXPECT_EQ(types,
            (std::vector<std::uint32_t>{kInt4, kText, kText, kText, kTimestamptz, kInt4}));

  RelationMessage tickets = As<RelationMessage>(m[4]);
  EXPECT_EQ(tickets.name, "tickets");
  EXPECT_EQ(tickets.replica_identity, ReplicaIdentity::kIndex);
  ASSERT_EQ(tickets.columns.size(), 3u);
  EXPECT_TRUE(tickets.columns[0].key);
  EXPECT_TRUE(tickets.columns[1].key);
  EXPECT_FALSE(tickets.columns[2].key);
  EXPECT_EQ(tickets.columns[2].name, "fan");

  RelationMessage payments = As<RelationMessage>(m[6]);
  EXPECT_EQ(payments.name, "payments");
  EXPECT_EQ(payments.replica_identity, ReplicaIdentity::kIndex);
  ASSERT_EQ(payments.columns.size(), 7u);
  EXPECT_EQ(payments.columns[0].name, "idempotency_key");
  EXPECT_TRUE(payments.columns[0].key);
  EXPECT_EQ(payments.columns[1].name, "event_id");
  EXPECT_TRUE(payments.columns[1].key);
  for (std::size_t i = 2; i < 7; ++i) EXPECT_FALSE(payments.columns[i].key) << i;
  EXPECT_NE(seats.oid, tickets.oid);
  EXPECT_NE(tickets.oid, payments.oid);
}

TEST(PgoutputParserTest, InsertsCarryTheNewRow) {
  std::vector<CapturedMessage> m = LoadCapture("insert");
  RelationMessage seats = As<RelationMessage>(m[1]);
  InsertMessage a1 = As<InsertMessage>(m[2]);
  EXPECT_EQ(a1.relation_oid, seats.oid);
  EXPECT_EQ(Texts(a1.new_tuple), (Strings{"7", "A1", "free", "<null>", "<null>", "0"}));
  EXPECT_EQ(Texts(As<InsertMessage>(m[3]).new_tuple),
            (Strings{"7", "A2", "sold", "<null>", "<null>", "0"}));
  EXPECT_EQ(Texts(As<InsertMessage>(m[5]).new_tuple), (Strings{"7", "A2", "ann"}));
  Strings payment = Texts(As<InsertMessage>(m[7]).new_tuple);
  ASSERT_EQ(payment.size(), 7u);
  EXPECT_EQ(Strings(payment.begin(), payment.begin() + 6),
            (Strings{"pay-1", "7", "A2", "ann", "4500", "confirmed"}));
}

// update.txt: a seat's status and a ticket's fan (identity columns
// unchanged: no old tuple), then a ticket and a payment moved to another
// event (old key 'K': the identity columns, the others NULL).
TEST(PgoutputParserTest, UpdatesWithAndWithoutTheOldKey) {
  std::vector<CapturedMessage> m = LoadCapture("update");
  ASSERT_EQ(m.size(), 15u);
  UpdateMessage seat = As<UpdateMessage>(m[2]);
  EXPECT_EQ(seat.old_kind, OldTuple::kNone);
  EXPECT_TRUE(seat.old_tuple.empty());
  EXPECT_EQ(Texts(seat.new_tuple), (Strings{"7", "A1", "held", "cat", "<null>", "0"}));

  UpdateMessage fan = As<UpdateMessage>(m[6]);
  EXPECT_EQ(fan.old_kind, OldTuple::kNone);
  EXPECT_EQ(Texts(fan.new_tuple), (Strings{"7", "A2", "anne"}));

  UpdateMessage moved = As<UpdateMessage>(m[9]);
  EXPECT_EQ(moved.relation_oid, As<RelationMessage>(m[5]).oid);
  EXPECT_EQ(moved.old_kind, OldTuple::kKey);
  EXPECT_EQ(Texts(moved.old_tuple), (Strings{"8", "B7", "<null>"}));
  EXPECT_EQ(Texts(moved.new_tuple), (Strings{"9", "B1", "bob"}));

  UpdateMessage payment = As<UpdateMessage>(m[13]);
  EXPECT_EQ(payment.old_kind, OldTuple::kKey);
  EXPECT_EQ(Texts(payment.old_tuple),
            (Strings{"pay-2", "8", "<null>", "<null>", "<null>", "<null>", "<null>"}));
  EXPECT_EQ(Texts(payment.new_tuple)[1], "7");
  for (std::size_t i : {0u, 4u, 8u, 11u}) {
    EXPECT_EQ(As<BeginMessage>(m[i]).xid, m[i].xid) << i;
  }
}

TEST(PgoutputParserTest, DeletesCarryTheReplicaIdentity) {
  std::vector<CapturedMessage> m = LoadCapture("delete");
  DeleteMessage ticket = As<DeleteMessage>(m[2]);
  EXPECT_EQ(ticket.old_kind, OldTuple::kKey);
  EXPECT_EQ(Texts(ticket.old_tuple), (Strings{"7", "A2", "<null>"}));
  DeleteMessage payment = As<DeleteMessage>(m[6]);
  EXPECT_EQ(Texts(payment.old_tuple),
            (Strings{"pay-1", "7", "<null>", "<null>", "<null>", "<null>", "<null>"}));
}

// Under REPLICA IDENTITY DEFAULT a payment's delete carries only its primary
// key: event_id is a NULL placeholder.
TEST(PgoutputParserTest, DeleteUnderDefaultIdentityCarriesOnlyThePrimaryKey) {
  std::vector<CapturedMessage> m = LoadCapture("delete_default");
  RelationMessage payments = As<RelationMessage>(m[1]);
  EXPECT_EQ(payments.replica_identity, ReplicaIdentity::kDefault);
  EXPECT_TRUE(payments.columns[0].key);
  EXPECT_FALSE(payments.columns[1].key);
  UpdateMessage update = As<UpdateMessage>(m[2]);
  EXPECT_EQ(update.old_kind, OldTuple::kNone);
  EXPECT_EQ(Texts(update.new_tuple)[5], "failed");
  DeleteMessage removed = As<DeleteMessage>(m[5]);
  EXPECT_EQ(removed.old_kind, OldTuple::kKey);
  EXPECT_EQ(Texts(removed.old_tuple),
            (Strings{"pay-2", "<null>", "<null>", "<null>", "<null>", "<null>", "<null>"}));
}

TEST(PgoutputParserTest, IdentityFullCarriesTheWholeOldRow) {
  std::vector<CapturedMessage> m = LoadCapture("identity_full");
  ASSERT_EQ(m.size(), 11u);
  RelationMessage payments = As<RelationMessage>(m[5]);
  EXPECT_EQ(payments.replica_identity, ReplicaIdentity::kFull);
  for (const RelationColumn& c : payments.columns) EXPECT_TRUE(c.key) << c.name;
  UpdateMessage update = As<UpdateMessage>(m[6]);
  EXPECT_EQ(update.old_kind, OldTuple::kFull);
  Strings old_row = Texts(update.old_tuple);
  EXPECT_EQ(Strings(old_row.begin(), old_row.begin() + 6),
            (Strings{"pay-3", "7", "A2", "dan", "1200", "started"}));
  EXPECT_EQ(Texts(update.new_tuple)[1], "8");
  DeleteMessage removed = As<DeleteMessage>(m[9]);
  EXPECT_EQ(removed.old_kind, OldTuple::kFull);
  EXPECT_EQ(Texts(removed.old_tuple)[1], "8");
  EXPECT_EQ(Texts(removed.old_tuple)[5], "confirmed");
}

TEST(PgoutputParserTest, TruncateListsItsRelationsAndOptions) {
  std::vector<CapturedMessage> m = LoadCapture("truncate");
  RelationMessage tickets = As<RelationMessage>(m[1]);
  TruncateMessage first = As<TruncateMessage>(m[2]);
  EXPECT_EQ(first.options, TruncateMessage::kRestartIdentity);
  EXPECT_EQ(first.relation_oids, (std::vector<std::uint32_t>{tickets.oid}));
  RelationMessage seats = As<RelationMessage>(m[5]);
  RelationMessage payments = As<RelationMessage>(m[6]);
  EXPECT_EQ(payments.name, "payments");
  TruncateMessage cascade = As<TruncateMessage>(m[7]);
  EXPECT_EQ(cascade.options, TruncateMessage::kCascade);
  EXPECT_EQ(cascade.relation_oids, (std::vector<std::uint32_t>{seats.oid, payments.oid}));
}

// A 2 MB value of incompressible text is stored out of line: the insert
// carries it whole, an update that does not touch it says 'u'.
TEST(PgoutputParserTest, TwoMegabyteRowAndUnchangedToast) {
  std::vector<CapturedMessage> m = LoadCapture("big_row");
  ASSERT_EQ(m.size(), 7u);
  InsertMessage insert = As<InsertMessage>(m[2]);
  ASSERT_EQ(insert.new_tuple.size(), 3u);
  EXPECT_EQ(Texts(insert.new_tuple)[1], "Z9");
  const TupleValue& fan = insert.new_tuple[2];
  EXPECT_EQ(fan.kind, TupleValue::Kind::kText);
  EXPECT_EQ(fan.data.size(), 65536u * 32);
  EXPECT_EQ(fan.data.find_first_not_of("0123456789abcdef"), std::string_view::npos);
  EXPECT_GT(m[2].bytes.size(), 2u * 1024 * 1024);
  UpdateMessage update = As<UpdateMessage>(m[5]);
  EXPECT_EQ(update.old_kind, OldTuple::kKey);
  EXPECT_EQ(Texts(update.old_tuple), (Strings{"12", "Z9", "<null>"}));
  EXPECT_EQ(Texts(update.new_tuple), (Strings{"12", "Z8", "<toast>"}));
}

TEST(PgoutputParserTest, TypeMessageAnnouncesAUserType) {
  std::vector<CapturedMessage> m = LoadCapture("unwatched");
  TypeMessage type = As<TypeMessage>(m[1]);
  EXPECT_EQ(type.namespace_name, "public");
  EXPECT_EQ(type.name, "extra_kind");
  RelationMessage extras = As<RelationMessage>(m[2]);
  EXPECT_EQ(extras.name, "extras");
  ASSERT_EQ(extras.columns.size(), 3u);
  EXPECT_EQ(extras.columns[1].name, "kind");
  EXPECT_EQ(extras.columns[1].type_oid, type.oid);
  EXPECT_EQ(Texts(As<InsertMessage>(m[3]).new_tuple), (Strings{"1", "large", "not watched"}));
}

TEST(PgoutputParserTest, LogicalMessagesInAndOutsideTransactions) {
  std::vector<CapturedMessage> m = LoadCapture("messages");
  LogicalMessage inside = As<LogicalMessage>(m[1]);
  EXPECT_TRUE(inside.transactional);
  EXPECT_EQ(inside.prefix, "seatwatch");
  EXPECT_EQ(inside.content, "in a transaction");
  LogicalMessage outside = As<LogicalMessage>(m[5]);
  EXPECT_FALSE(outside.transactional);
  EXPECT_EQ(outside.content, "outside");
  EXPECT_EQ(outside.lsn, m[5].lsn);
  EXPECT_EQ(m[5].xid, 0u);
  EXPECT_TRUE(std::holds_alternative<BeginMessage>(ParsePgoutputMessage(m[6].bytes)));
}

TEST(PgoutputParserTest, OriginOfAReplicatedTransaction) {
  std::vector<CapturedMessage> m = LoadCapture("origin");
  OriginMessage origin = As<OriginMessage>(m[1]);
  EXPECT_EQ(origin.name, "capture_origin");
  EXPECT_EQ(origin.commit_lsn, 0x1234ABCDu);
  // pg_replication_origin_xact_setup's timestamp, 2026-01-02 03:04:05 UTC,
  // in microseconds since 2000-01-01.
  EXPECT_EQ(As<BeginMessage>(m[0]).commit_time, 820638245000000);
}

TEST(PgoutputParserTest, EveryCapturedMessageParses) {
  int count = 0;
  for (const std::string& name : CaptureNames()) {
    for (const CapturedMessage& m : LoadCapture(name)) {
      PgoutputMessage parsed = ParsePgoutputMessage(m.bytes);
      EXPECT_EQ(std::string(PgoutputMessageName(parsed)).substr(0, 1),
                m.bytes.substr(0, 1) == "Y" ? "T" : m.bytes.substr(0, 1))
          << name;
      ++count;
    }
  }
  EXPECT_EQ(count, 9 + 15 + 8 + 7 + 11 + 9 + 7 + 7 + 9 + 5);
}

// Every prefix of every real message is malformed: it must throw
// PgoutputError naming the message type, never read past the end (ASan
// builds check that). The 2 MB message is cut at every offset of its first
// and last 4 KB and every 9973rd in between. One byte more is malformed too.
TEST(PgoutputParserTest, TruncatedAtEveryOffsetThrows) {
  std::size_t cuts = 0;
  for (const std::string& name : CaptureNames()) {
    for (const CapturedMessage& m : LoadCapture(name)) {
      std::string type = PgoutputMessageName(ParsePgoutputMessage(m.bytes));
      for (std::size_t n = 0; n < m.bytes.size(); ++n) {
        if (n > 4096 && n + 4096 < m.bytes.size() && n % 9973 != 0) continue;
        // A copy of exactly n bytes, so that ASan sees a read past it.
        std::string cut = m.bytes.substr(0, n);
        try {
          ParsePgoutputMessage(cut);
          ADD_FAILURE() << name << " " << type << " cut at " << n << " parsed";
        } catch (const PgoutputError& e) {
          if (n > 0) {
            EXPECT_EQ(std::string(e.what()).rfind("pgoutput " + type + " message at byte ", 0),
                      0u)
                << e.what();
          }
        }
        ++cuts;
      }
      EXPECT_THROW(ParsePgoutputMessage(m.bytes + '\0'), PgoutputError) << name << " " << type;
    }
  }
  EXPECT_GT(cuts, 10000u);
}

TEST(PgoutputParserTest, ErrorsNameTheTypeAndOffset) {
  auto error = [](const std::string& bytes) -> std::string {
    try {
      ParsePgoutputMessage(bytes);
    } catch (const PgoutputError& e) {
      return e.what();
    }
    return "parsed";
  };
  EXPECT_EQ(error(""), "pgoutput: empty message");
  EXPECT_EQ(error("X"), "pgoutput: unknown message type 0x58 'X' at byte 0");
  EXPECT_EQ(error(std::string(1, '\x01')), "pgoutput: unknown message type 0x01 at byte 0");
  // A column that says 100 bytes with 3 left.
  std::string short_value =
      MessageBuilder('I').Int32(16384).Byte('N').Int16(1).Byte('t').Int32(100).bytes() + "abc";
  EXPECT_EQ(error(short_value),
            "pgoutput Insert message at byte 13: column value needs 100 bytes, 3 left");
  EXPECT_EQ(error(MessageBuilder('I').Int32(1).Byte('N').Int16(1).Byte('t').Int32(-1).bytes()),
            "pgoutput Insert message at byte 9: negative column length -1");
  // A column count that the bytes cannot hold is refused before any vector
  // is sized for it.
  EXPECT_EQ(error(MessageBuilder('I').Int32(1).Byte('N').Int16(32767).Byte('n').bytes()),
            "pgoutput Insert message at byte 6: tuple of 32767 columns in 1 bytes");
  EXPECT_EQ(error(MessageBuilder('I').Int32(1).Byte('N').Int16(-2).bytes()),
            "pgoutput Insert message at byte 6: negative tuple column count -2");
  EXPECT_EQ(error(MessageBuilder('I').Int32(1).Byte('N').Int16(1).Byte('x').bytes()),
            "pgoutput Insert message at byte 8: unknown column kind 0x78 'x'");
  EXPECT_EQ(error(MessageBuilder('T').Int32(0x7fffffff).Byte(0).Int32(1).bytes()),
            "pgoutput Truncate message at byte 1: 2147483647 relations in 4 bytes");
  EXPECT_EQ(error(MessageBuilder('T').Int32(-1).Byte(0).bytes()),
            "pgoutput Truncate message at byte 1: -1 relations in 0 bytes");
  EXPECT_EQ(error(MessageBuilder('D').Int32(1).Byte('N').Int16(0).bytes()),
            "pgoutput Delete message at byte 5: tuple tag 0x4e 'N', expected one of KO");
  EXPECT_EQ(error(MessageBuilder('U').Int32(1).Byte('K').Int16(0).Byte('K').Int16(0).bytes()),
            "pgoutput Update message at byte 8: tuple tag 0x4b 'K', expected one of N");
  EXPECT_EQ(error(MessageBuilder('R').Int32(1).String("public").String("t").Byte('x').Int16(0)
                      .bytes()),
            "pgoutput Relation message at byte 14: unknown replica identity 0x78 'x'");
  EXPECT_EQ(error(MessageBuilder('R').Int32(1).String("public").String("t").Byte('d').Int16(100)
                      .bytes()),
            "pgoutput Relation message at byte 15: 100 columns in 0 bytes");
  EXPECT_EQ(error(MessageBuilder('Y').Int32(1).bytes() + "public"),
            "pgoutput Type message at byte 5: namespace: string without its NUL");
  EXPECT_EQ(error(MessageBuilder('M').Byte(1).Int64(5).String("p").Int32(-5).bytes()),
            "pgoutput Message message at byte 12: negative content length -5");
  EXPECT_EQ(error(MessageBuilder('B').Int64(1).Int64(2).Int32(3).Byte(0).bytes()),
            "pgoutput Begin message at byte 21: 1 bytes after the message");
}

TEST(PgoutputParserTest, BinaryColumnsAreRead) {
  std::string bytes =
      MessageBuilder('I').Int32(9).Byte('N').Int16(2).Byte('b').Int32(2).bytes() +
                      std::string("\x00\x01", 2);
  bytes += 'u';
  InsertMessage insert = std::get<InsertMessage>(ParsePgoutputMessage(bytes));
  ASSERT_EQ(insert.new_tuple.size(), 2u);
  EXPECT_EQ(insert.new_tuple[0].kind, TupleValue::Kind::kBinary);
  EXPECT_EQ(insert.new_tuple[0].data, std::string("\x00\x01", 2));
  EXPECT_EQ(insert.new_tuple[1].kind, TupleValue::Kind::kUnchangedToast);
}

TEST(ByteaTextTest, DecodesTheHexFormat) {
  EXPECT_EQ(DecodeByteaText("\\x"), "");
  EXPECT_EQ(DecodeByteaText("\\x4a6B00ff"), std::string("Jk\x00\xff", 4));
  EXPECT_THROW(DecodeByteaText(""), PgoutputError);
  EXPECT_THROW(DecodeByteaText("4a6b"), PgoutputError);
  EXPECT_THROW(DecodeByteaText("\\x4"), PgoutputError);
  EXPECT_THROW(DecodeByteaText("\\x4g"), PgoutputError);
  EXPECT_THROW(DecodeByteaText("\\x 4"), PgoutputError);
  // The escape format (bytea_output = escape) is refused, not misread.
  EXPECT_THROW(DecodeByteaText("B\\000\\000"), PgoutputError);
  try {
    DecodeByteaText("\\x00zz");
    ADD_FAILURE();
  } catch (const PgoutputError& e) {
    EXPECT_STREQ(e.what(), "bytea text: not a hex digit at offset 4");
  }
}

}  // namespace
}  // namespace seatwatch::changes
