// Provenance without a database: which columns a check's SQL names, what the
// decoder keeps of each change (only those columns, values cut, caps), the
// ledger per check (a ring per key, a cap overall, settled when clean), the
// sessions seen holding xids, how a violation keeps its first cause, and
// the text and JSON they are shown as.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "changes/change_decoder.h"
#include "changes/session_sightings.h"
#include "changes/sql_words.h"
#include "checks/provenance_ledger.h"
#include "metrics/provenance.h"
#include "metrics/provenance_json.h"
#include "metrics/violation_lifecycle.h"
#include "unit/pgoutput_captures.h"

namespace seatwatch {
namespace {

using changes::ChangeDecoder;
using changes::SqlWords;
using changes::TransactionChanges;
using metrics::Provenance;
using testing::MessageBuilder;

using Words = std::set<std::string>;

TEST(SqlWordsTest, FoldsUnquotedNamesAndSkipsStringsCommentsAndParameters) {
  EXPECT_EQ(SqlWords("SELECT Event_ID, count(*) FROM seats s WHERE s.status = 'sold'"),
            (Words{"count", "event_id", "s", "seats", "status"}));
  // Strings (with doubled quotes, E'', dollar quoting) and comments name no
  // column; a quoted name is taken as written.
  EXPECT_EQ(SqlWords("SELECT \"HoldUntil\", 'pass''word' -- secret\n"
                     "/* token */ FROM t WHERE x = E'\\x' AND y = $$ssn$$ AND z = $1"),
            (Words{"HoldUntil", "t", "x", "y", "z"}));
  // A two-letter column before a string is a column, not a prefix.
  EXPECT_EQ(SqlWords("WHERE id='x'"), (Words{"id"}));
  EXPECT_EQ(SqlWords("SELECT 1.5e3, x2 FROM t"), (Words{"t", "x2"}));
  // Reserved words cannot name a column unless quoted.
  EXPECT_EQ(SqlWords("SELECT \"select\", \"order\" FROM t ORDER BY 1"),
            (Words{"by", "order", "select", "t"}));
}

// seats(event_id, seat, status, holder, secret): event_id and seat are the
// replica identity.
std::string SeatsRelation(char identity = 'i') {
  return MessageBuilder('R').Int32(1).String("public").String("seats").Byte(identity).Int16(5)
      .Byte(1).String("event_id").Int32(23).Int32(-1)
      .Byte(1).String("seat").Int32(25).Int32(-1)
      .Byte(0).String("status").Int32(25).Int32(-1)
      .Byte(0).String("holder").Int32(25).Int32(-1)
      .Byte(0).String("secret").Int32(25).Int32(-1).bytes();
}

// 2026-12-06T12:00:00Z in pgoutput's microseconds since 2000-01-01.
constexpr std::int64_t kCommitTime = (1796558400LL - 946684800LL) * 1000000LL;

std::string Begin(std::int32_t xid, std::int64_t final_lsn = 0x16B3748) {
  return MessageBuilder('B').Int64(final_lsn).Int64(kCommitTime).Int32(xid).bytes();
}
std::string Commit() { return MessageBuilder('C').Byte(0).Int64(1).Int64(2).Int64(3).bytes(); }

MessageBuilder& Row(MessageBuilder& m, const std::vector<const char*>& values) {
  m.Int16(static_cast<std::int16_t>(values.size()));
  for (const char* value : values) {
    if (value) {
      m.Text(value);
    } else {
      m.Byte('n');
    }
  }
  return m;
}

std::string Insert(const std::vector<const char*>& row) {
  MessageBuilder m('I');
  m.Int32(1).Byte('N');
  return Row(m, row).bytes();
}

std::string Update(char old_kind, const std::vector<const char*>& old_row,
                   const std::vector<const char*>& new_row) {
  MessageBuilder m('U');
  m.Int32(1);
  if (old_kind) {
    m.Byte(old_kind);
    Row(m, old_row);
  }
  m.Byte('N');
  return Row(m, new_row).bytes();
}

std::string Delete(const std::vector<const char*>& old_row, char old_kind = 'K') {
  MessageBuilder m('D');
  m.Int32(1).Byte(old_kind);
  return Row(m, old_row).bytes();
}

ChangeDecoder SeatsDecoder(char identity = 'i') {
  ChangeDecoder decoder(std::map<std::string, std::string>{{"seats", "event_id"}});
  decoder.SetMonitoredWords({{"seats", SqlWords("SELECT event_id, seat, status, holder "
                                                 "FROM seats WHERE status = 'sold'")}});
  decoder.Feed(SeatsRelation(identity));
  return decoder;
}

TransactionChanges OneTransaction(ChangeDecoder& decoder, std::int32_t xid,
                                  const std::vector<std::string>& changes) {
  decoder.Feed(Begin(xid));
  for (const auto& change : changes) decoder.Feed(change);
  decoder.Feed(Commit());
  auto committed = decoder.TakeCommitted();
  EXPECT_EQ(committed.size(), 1u);
  return committed.empty() ? TransactionChanges{} : committed[0];
}

TEST(ProvenanceDecoderTest, AnUpdateKeepsTheCommitAndTheMonitoredColumnsOnly) {
  ChangeDecoder decoder = SeatsDecoder();
  TransactionChanges t = OneTransaction(
      decoder, 901, {Update(0, {}, {"1", "A12", "sold", "admin", "hunter2"})});
  EXPECT_EQ(t.xid, 901u);
  EXPECT_EQ(t.commit_lsn, 0x16B3748u);
  EXPECT_DOUBLE_EQ(t.commit_unix, 1796558400.0);
  ASSERT_EQ(t.rows.size(), 1u);
  // No old tuple under an index identity: the old values are not known.
  EXPECT_EQ(metrics::DescribeChange(t.rows[0]),
            "UPDATE seats(event_id=1, seat=A12) status ?→sold holder ?→admin");
  for (const auto& column : t.rows[0].columns) EXPECT_NE(column.column, "secret");
  EXPECT_FALSE(t.rows_truncated);
}

TEST(ProvenanceDecoderTest, AFullOldRowShowsOnlyWhatChanged) {
  ChangeDecoder decoder = SeatsDecoder('f');
  TransactionChanges t = OneTransaction(
      decoder, 902,
      {Update('O', {"1", "A12", "held", "fan-7", "x"}, {"1", "A12", "sold", "fan-7", "y"})});
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(metrics::DescribeChange(t.rows[0]), "UPDATE seats(event_id=1, seat=A12) status held→sold");
}

TEST(ProvenanceDecoderTest, InsertDeleteAndAMovedKeyEachBearOnTheirKeys) {
  ChangeDecoder decoder = SeatsDecoder('f');
  TransactionChanges t = OneTransaction(
      decoder, 903,
      {Insert({"2", "B1", "free", nullptr, "s"}), Delete({"3", "C1", "sold", "fan", "s"}, 'O'),
       Update('O', {"4", "D1", "sold", "fan", "s"}, {"5", "D1", "sold", "fan", "s"})});
  EXPECT_EQ(t.keys, (std::map<std::string, std::set<std::string>>{{"seats", {"2", "3", "4", "5"}}}));
  std::vector<std::string> text;
  for (const auto& row : t.rows) text.push_back(metrics::DescribeChange(row));
  EXPECT_EQ(text, (std::vector<std::string>{
                      "INSERT seats(event_id=2, seat=B1) status free holder NULL",
                      "DELETE seats(event_id=3, seat=C1) status sold holder fan",
                      "UPDATE seats(event_id=4, seat=D1)",
                      "UPDATE seats(event_id=5, seat=D1)"}));
}

TEST(ProvenanceDecoderTest, LongValuesAreCutOnACharacterAndRowsCappedPerTransaction) {
  ChangeDecoder decoder = SeatsDecoder();
  std::string long_holder(62, 'x');
  long_holder += "é€";  // 62 + 2 + 3 bytes: the cut falls inside the euro sign
  decoder.Feed(Begin(904));
  decoder.Feed(Insert({"1", "A1", "held", long_holder.c_str(), "s"}));
  for (std::size_t i = 1; i < TransactionChanges::kMaxRowChanges + 10; ++i) {
    std::string seat = "S" + std::to_string(i);
    decoder.Feed(Insert({"1", seat.c_str(), "free", nullptr, "s"}));
  }
  decoder.Feed(Commit());
  auto committed = decoder.TakeCommitted();
  ASSERT_EQ(committed.size(), 1u);
  const TransactionChanges& t = committed[0];
  EXPECT_EQ(t.rows.size(), TransactionChanges::kMaxRowChanges);
  EXPECT_TRUE(t.rows_truncated);
  const metrics::ValueText& holder = t.rows[0].columns[1].after;
  EXPECT_EQ(holder.text, std::string(62, 'x') + "é");
  EXPECT_TRUE(holder.cut);
  EXPECT_EQ(holder.Display(), std::string(62, 'x') + "é…");
}

TEST(ProvenanceDecoderTest, WithoutMonitoredWordsOnlyTheKeyIsKept) {
  ChangeDecoder decoder(std::map<std::string, std::string>{{"seats", "event_id"}});
  decoder.Feed(SeatsRelation());
  TransactionChanges t = OneTransaction(decoder, 905, {Insert({"1", "A1", "held", "f", "s"})});
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(metrics::DescribeChange(t.rows[0]), "INSERT seats(event_id=1)");
}

TransactionChanges Commit(std::uint32_t xid, const std::vector<std::string>& keys,
                          const std::string& table = "seats") {
  TransactionChanges t;
  t.xid = xid;
  t.commit_lsn = 1000 + xid;
  t.commit_unix = 1796558400 + xid;
  for (const auto& key : keys) {
    t.keys[table].insert(key);
    metrics::RowChange row;
    row.operation = "UPDATE";
    row.table = table;
    row.key_column = "event_id";
    row.key = key;
    t.rows.push_back(row);
  }
  return t;
}

std::vector<std::uint32_t> Xids(const std::shared_ptr<const Provenance>& provenance) {
  std::vector<std::uint32_t> xids;
  if (provenance) {
    for (const auto& commit : provenance->commits) xids.push_back(commit.xid);
  }
  return xids;
}

TEST(ProvenanceLedgerTest, AKeyKeepsItsCommitsUntilARunFindsItClean) {
  checks::ProvenanceLedger ledger({"seats", "tickets"});
  ledger.Record({Commit(1, {"1", "2"}), Commit(2, {"2"}), Commit(3, {"9"}, "other_table")});
  EXPECT_EQ(Xids(ledger.Of("1")), (std::vector<std::uint32_t>{1}));
  EXPECT_EQ(Xids(ledger.Of("2")), (std::vector<std::uint32_t>{1, 2}));
  EXPECT_EQ(ledger.Of("9"), nullptr) << "a table the check does not watch";
  ASSERT_EQ(ledger.Of("2")->commits[1].changes.size(), 1u);
  EXPECT_EQ(ledger.Of("2")->commits[1].changes[0].key, "2");
  EXPECT_EQ(ledger.Of("2"), ledger.Of("2")) << "built once until it changes";
  // Key 2 violated, key 1 clean, but xid 4 of key 1 not seen by that run.
  ledger.Record({Commit(4, {"1"})});
  ledger.Settle({"2"}, {4});
  EXPECT_EQ(Xids(ledger.Of("1")), (std::vector<std::uint32_t>{4}));
  EXPECT_EQ(Xids(ledger.Of("2")), (std::vector<std::uint32_t>{1, 2}));
  // A run that saw none of a key's commits leaves them whole.
  ledger.Settle({"2"}, {4});
  ledger.Settle({"2"}, {4});
  EXPECT_EQ(Xids(ledger.Of("1")), (std::vector<std::uint32_t>{4}));
  EXPECT_EQ(ledger.Of("1")->commits[0].xid, 4u);
  EXPECT_EQ(ledger.commits(), 3u);
  ledger.Settle({}, {});
  EXPECT_EQ(ledger.Of("1"), nullptr);
  EXPECT_EQ(ledger.Of("2"), nullptr);
  EXPECT_EQ(ledger.commits(), 0u);
  EXPECT_EQ(ledger.evicted(), 0u);
}

TEST(ProvenanceLedgerTest, AHotKeyKeepsItsNewestCommitsAndSaysHowManyWentBefore) {
  checks::ProvenanceLedger ledger({"seats"});
  for (std::uint32_t xid = 1; xid <= checks::ProvenanceLedger::kPerKey + 5; ++xid) {
    ledger.Record({Commit(xid, {"1"})});
  }
  auto provenance = ledger.Of("1");
  ASSERT_EQ(provenance->commits.size(), checks::ProvenanceLedger::kPerKey);
  EXPECT_EQ(provenance->commits.front().xid, 6u);
  EXPECT_EQ(provenance->earlier_omitted, 5u);
  EXPECT_EQ(ledger.evicted(), 0u) << "a ring turning over is not the cap";
}

// One transaction that touched 100,000 keys: memory stays within the cap,
// the oldest keys' commits go first and every one is counted.
TEST(ProvenanceLedgerTest, ATransactionOfAHundredThousandKeysIsEvictedToTheCap) {
  ChangeDecoder decoder = SeatsDecoder();
  decoder.Feed(Begin(77));
  for (int event = 1; event <= 100000; ++event) {
    std::string key = std::to_string(event);
    decoder.Feed(Insert({key.c_str(), "A1", "free", nullptr, "s"}));
  }
  decoder.Feed(Commit());
  auto committed = decoder.TakeCommitted();
  ASSERT_EQ(committed.size(), 1u);
  EXPECT_EQ(committed[0].keys.at("seats").size(), 100000u);
  EXPECT_EQ(committed[0].rows.size(), TransactionChanges::kMaxRowChanges);

  checks::ProvenanceLedger ledger({"seats"});
  ledger.Record(committed);
  EXPECT_EQ(ledger.commits(), checks::ProvenanceLedger::kMaxCommits);
  EXPECT_EQ(ledger.keys(), checks::ProvenanceLedger::kMaxCommits);
  EXPECT_EQ(ledger.evicted(), 100000u - checks::ProvenanceLedger::kMaxCommits);
  // Keys are taken in text order ("1", "10", "100", ...): the first ones went,
  // whole.
  EXPECT_EQ(ledger.Of("1"), nullptr);
  auto kept = ledger.Of("99999");
  ASSERT_EQ(kept->commits.size(), 1u);
  EXPECT_EQ(kept->commits[0].xid, 77u);
  EXPECT_TRUE(kept->commits[0].truncated) << "its change was past the transaction's cap";
  // Found clean, all of it goes.
  ledger.Settle({}, {});
  EXPECT_EQ(ledger.commits(), 0u);
  EXPECT_EQ(ledger.keys(), 0u);
}

TEST(SessionSightingsTest, ASessionSeenHoldingAnXidIsGivenToItsCommitOnce) {
  changes::SessionSightings sightings;
  sightings.NoteAll(std::string("901\x1f") + "admin-script\x1f" + "ops\x1f" + "127.0.0.1\x1e" +
                    "902\x1f" + "\x1f" + "app\x1f" + "local\x1e" + "bad row\x1e" +
                    "99999999999\x1f" + "a\x1f" + "b\x1f" + "c");
  EXPECT_EQ(sightings.size(), 2u);
  std::vector<TransactionChanges> batch = {Commit(901, {"1"}), Commit(903, {"1"})};
  sightings.Attach(batch);
  ASSERT_TRUE(batch[0].session.has_value());
  EXPECT_EQ(batch[0].session->application_name, "admin-script");
  EXPECT_EQ(batch[0].session->user, "ops");
  EXPECT_EQ(batch[0].session->client_addr, "127.0.0.1");
  EXPECT_FALSE(batch[1].session.has_value());
  EXPECT_EQ(sightings.size(), 1u);
  for (std::uint32_t xid = 1000; xid < 1000 + changes::SessionSightings::kMaxSightings + 50;
       ++xid) {
    sightings.Note(xid, {"a", "u", "local"});
  }
  EXPECT_EQ(sightings.size(), changes::SessionSightings::kMaxSightings);
}

metrics::InvariantResult Result(const std::string& event, double value,
                                std::shared_ptr<const Provenance> cause) {
  metrics::InvariantResult result;
  result.name = "sold_seat_without_ticket";
  result.check = "booking";
  metrics::Violation violation;
  violation.labels = {{"event_id", event}};
  violation.value = value;
  violation.cause = std::move(cause);
  result.violations.push_back(violation);
  return result;
}

TEST(ProvenanceLifecycleTest, AViolationKeepsTheCauseItOpenedWithUntilItHeals) {
  metrics::ViolationLifecycle lifecycle(100);
  auto first = std::make_shared<Provenance>();
  first->commits.resize(1);
  first->commits[0].xid = 11;
  auto later = std::make_shared<Provenance>();
  later->commits.resize(1);
  later->commits[0].xid = 12;
  lifecycle.Observe("booking", {Result("1", 1, first)}, 101);
  lifecycle.Observe("booking", {Result("1", 1, later)}, 102);
  auto state = lifecycle.State();
  const auto* open = metrics::FindOpen(*state, "booking", "sold_seat_without_ticket",
                                       {{"event_id", "1"}});
  ASSERT_NE(open, nullptr);
  EXPECT_EQ(open->first_violated_by, first);
  std::uint64_t more = 7;
  auto opened = lifecycle.TakeOpened(&more);
  ASSERT_EQ(opened.size(), 1u);
  EXPECT_EQ(opened[0].first_violated_by, first);
  EXPECT_EQ(more, 0u);
  EXPECT_TRUE(lifecycle.TakeOpened(&more).empty());
  lifecycle.Observe("booking", {Result("1", 0, nullptr)}, 103);
  state = lifecycle.State();
  ASSERT_EQ(state->healed.size(), 1u);
  EXPECT_EQ(state->healed.front().first_violated_by, first);
}

TEST(ProvenanceLifecycleTest, OnlySoManyOpenKeysHoldTheirProvenance) {
  metrics::ViolationLifecycle lifecycle(100);
  auto cause = std::make_shared<Provenance>();
  cause->commits.resize(1);
  metrics::InvariantResult result = Result("0", 1, cause);
  result.violations.clear();
  const std::size_t n = metrics::ViolationLifecycle::kMaxWithProvenance + 5;
  for (std::size_t i = 0; i < n; ++i) {
    result.violations.push_back({{{"event_id", std::to_string(i)}}, 1, cause});
  }
  lifecycle.Observe("booking", {result}, 101);
  auto state = lifecycle.State();
  std::size_t held = 0, dropped = 0;
  for (const auto& [key, open] : state->open) {
    held += open.first_violated_by != nullptr;
    dropped += open.provenance_dropped;
  }
  EXPECT_EQ(held, metrics::ViolationLifecycle::kMaxWithProvenance);
  EXPECT_EQ(dropped, 5u);
  EXPECT_EQ(state->with_provenance, metrics::ViolationLifecycle::kMaxWithProvenance);
  // Ten that held theirs heal: the next run's new keys may hold theirs.
  result.violations.erase(result.violations.begin(), result.violations.begin() + 10);
  lifecycle.Observe("booking", {result}, 102);
  EXPECT_EQ(lifecycle.State()->with_provenance,
            metrics::ViolationLifecycle::kMaxWithProvenance - 10);
  result.violations.push_back({{{"event_id", "new"}}, 1, cause});
  lifecycle.Observe("booking", {result}, 103);
  state = lifecycle.State();
  EXPECT_EQ(state->with_provenance, metrics::ViolationLifecycle::kMaxWithProvenance - 9);
  const auto* fresh =
      metrics::FindOpen(*state, "booking", "sold_seat_without_ticket", {{"event_id", "new"}});
  ASSERT_NE(fresh, nullptr);
  EXPECT_EQ(fresh->first_violated_by, cause);
}

Provenance Sample() {
  Provenance provenance;
  provenance.earlier_omitted = 2;
  metrics::CommitProvenance commit;
  commit.xid = 901;
  commit.commit_lsn = 0x16B3748;
  commit.commit_unix = 1796558400.25;
  commit.session = metrics::SessionSeen{"admin-script", "ops", "local"};
  metrics::RowChange change;
  change.operation = "UPDATE";
  change.table = "seats";
  change.key_column = "event_id";
  change.key = "1";
  change.identity.push_back({"seat", {}, metrics::ValueText::Of(metrics::ValueText::Kind::kText, "A12")});
  change.columns.push_back({"status", metrics::ValueText::Of(metrics::ValueText::Kind::kText, "held"),
                            metrics::ValueText::Of(metrics::ValueText::Kind::kText, "sold")});
  change.columns.push_back({"holder", metrics::ValueText::Of(metrics::ValueText::Kind::kNull), {}});
  commit.changes.push_back(change);
  provenance.commits.push_back(commit);
  metrics::CommitProvenance unseen;
  unseen.xid = 902;
  unseen.commit_unix = 1796558401;
  unseen.truncated = true;
  provenance.commits.push_back(unseen);
  return provenance;
}

TEST(ProvenanceTextTest, TheLogLineAndTheJsonSayWhichCommitDidWhat) {
  EXPECT_EQ(metrics::LsnText(0x16B3748), "0/16B3748");
  EXPECT_EQ(metrics::LsnText((3ULL << 32) | 0xAB), "3/AB");
  EXPECT_EQ(metrics::UtcText(1796558400.25), "2026-12-06T12:00:00.250Z");
  EXPECT_EQ(metrics::DescribeProvenance(Sample()),
            "2 earlier commits not shown; xid=901 committed_at=2026-12-06T12:00:00.250Z "
            "lsn=0/16B3748 application=\"admin-script\" user=ops client=local "
            "changes=\"UPDATE seats(event_id=1, seat=A12) status held→sold holder NULL→?\"; "
            "xid=902 committed_at=2026-12-06T12:00:01.000Z lsn=0/0 application=(not seen) "
            "changes=\"(not kept)\"");
  util::JsonWriter json;
  metrics::WriteProvenance(json, Sample());
  EXPECT_EQ(json.str(),
            "{\"commits\":[{\"xid\":901,\"commit_lsn\":\"0/16B3748\","
            "\"committed_at\":\"2026-12-06T12:00:00.250Z\",\"commit_timestamp_seconds\":"
            "1796558400.25,\"session\":{\"application_name\":\"admin-script\",\"user\":\"ops\","
            "\"client_addr\":\"local\"},\"changes\":[{\"operation\":\"UPDATE\",\"table\":"
            "\"seats\",\"key\":{\"event_id\":\"1\"},\"identity\":{\"seat\":{\"new\":\"A12\"}},"
            "\"columns\":{\"status\":{\"old\":\"held\",\"new\":\"sold\"},\"holder\":{\"old\":"
            "null}},\"text\":\"UPDATE seats(event_id=1, seat=A12) status held→sold holder "
            "NULL→?\"}]},{\"xid\":902,\"commit_lsn\":\"0/0\",\"committed_at\":"
            "\"2026-12-06T12:00:01.000Z\",\"commit_timestamp_seconds\":1796558401,\"session\":"
            "\"not seen\",\"changes\":[],\"truncated\":true}],\"earlier_omitted\":2}");
}

}  // namespace
}  // namespace seatwatch
