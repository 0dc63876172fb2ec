// queries/booking/changes-setup.sql on a real database: the replica identity
// trap it exists for, the application's writes after it, what a logical slot
// then decodes of a ticket delete and of a payment moved between events, and
// that it can be run again. Each test has a database of its own (the
// publication and the indexes go with it); the slots are temporary.
#include <gtest/gtest.h>

#include <pqxx/binarystring>
#include <pqxx/nontransaction>
#include <pqxx/result>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "support/scratch_db.h"
#include "support/test_env.h"

namespace seatwatch {
namespace {

using testing::ScratchDatabase;

// The script as a DBA runs it: psql, statement by statement, stopping at the
// first error. Returns psql's exit status; its output goes to *output.
int RunSetup(const ScratchDatabase& db, std::string* output) {
  return testing::RunCommand("'" + testing::SourceDir() + "/scripts/pg-scratch' psql '" +
                                 testing::ScratchPgDir() + "' -X -q -v ON_ERROR_STOP=1 -d " +
                                 db.name() + " -f '" + testing::SourceDir() +
                                 "/queries/booking/changes-setup.sql'",
                             output);
}

void LoadBookings(const ScratchDatabase& db) {
  db.Exec(
      "INSERT INTO seats (event_id, seat, status, holder) VALUES "
      "(1, 'S1', 'sold', 'ann'), (1, 'S2', 'sold', 'bob'), (2, 'S1', 'free', NULL), "
      "(7, 'S3', 'sold', 'cid')");
  db.Exec("INSERT INTO tickets VALUES (1, 'S1', 'ann'), (1, 'S2', 'bob'), (7, 'S3', 'cid')");
  db.Exec(
      "INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents, status) VALUES "
      "('pay-1', 1, 'S1', 'ann', 5000, 'confirmed'), ('pay-2', 1, 'S2', 'bob', 5000, 'confirmed'), "
      "('pay-3', 7, 'S3', 'cid', 5000, 'confirmed')");
}

std::string SqlState(const std::string& sql, const ScratchDatabase& db) {
  try {
    db.Exec(sql);
  } catch (const pqxx::sql_error& e) {
    return e.sqlstate();
  }
  return "";
}

// The application's own writes on tickets and payments, as the booking flow
// makes them (and a DBA's repair moving a payment to another event).
void ExpectApplicationWritesWork(const ScratchDatabase& db) {
  EXPECT_EQ(SqlState("UPDATE tickets SET fan = 'ann2' WHERE event_id = 1 AND seat = 'S1'", db), "");
  EXPECT_EQ(SqlState("DELETE FROM tickets WHERE event_id = 1 AND seat = 'S2'", db), "");
  EXPECT_EQ(SqlState("UPDATE payments SET status = 'refunded' WHERE idempotency_key = 'pay-2'", db),
            "");
  EXPECT_EQ(SqlState("UPDATE payments SET event_id = 2 WHERE idempotency_key = 'pay-1'", db), "");
  EXPECT_EQ(SqlState("DELETE FROM payments WHERE idempotency_key = 'pay-2'", db), "");
  EXPECT_EQ(
      db.Scalar("SELECT string_agg(event_id || seat || fan, ',' ORDER BY event_id) FROM tickets"),
      "1S1ann2,7S3cid");
  EXPECT_EQ(
      db.Scalar(
          "SELECT string_agg(idempotency_key || ':' || event_id, ',' ORDER BY idempotency_key) "
          "FROM payments"),
      "pay-1:2,pay-3:7");
}

// Without a replica identity, tickets in a publication that publishes
// deletes and updates makes the application's DELETE and UPDATE fail
// (55000, object_not_in_prerequisite_state). The script gives it one first,
// so afterwards they work, with the script's publication in place.
TEST(ChangesSetupTest, ReplicaIdentityTrapAndTheApplicationsWritesAfterSetup) {
  ScratchDatabase db("seatwatch_changes_setup_trap");
  LoadBookings(db);
  db.Exec("CREATE PUBLICATION trap FOR TABLE tickets");
  EXPECT_EQ(SqlState("DELETE FROM tickets WHERE event_id = 7", db), "55000");
  EXPECT_EQ(SqlState("UPDATE tickets SET fan = 'x' WHERE event_id = 7", db), "55000");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM tickets"), "3");
  db.Exec("DROP PUBLICATION trap");

  std::string output;
  ASSERT_EQ(RunSetup(db, &output), 0) << output;
  EXPECT_EQ(
      db.Scalar("SELECT string_agg(relname || ':' || relreplident::text, ',' ORDER BY relname) "
                "FROM pg_class WHERE relname IN ('seats', 'tickets', 'payments')"),
      "payments:i,seats:d,tickets:i");
  EXPECT_EQ(db.Scalar("SELECT string_agg(indexrelid::regclass::text, ',' ORDER BY "
                      "indexrelid::regclass::text) FROM pg_index "
                      "WHERE indisreplident"),
            "payments_idempotency_key_event_id_idx,tickets_event_id_seat_key");
  ExpectApplicationWritesWork(db);
}

// --- pgoutput, just enough to read what the publication sends -------------

struct Reader {
  const std::string& data;
  size_t at = 0;
  std::uint8_t Byte() { return static_cast<std::uint8_t>(data.at(at++)); }
  std::uint32_t Int(int bytes) {
    std::uint32_t v = 0;
    for (int i = 0; i < bytes; ++i) v = (v << 8) | Byte();
    return v;
  }
  std::string CString() {
    size_t end = data.find('\0', at);
    std::string s = data.substr(at, end - at);
    at = end + 1;
    return s;
  }
  std::vector<std::string> Tuple() {  // text columns only ('t'), as here
    std::vector<std::string> values;
    for (std::uint32_t n = Int(2); n > 0; --n) {
      char kind = static_cast<char>(Byte());
      if (kind != 't') {
        values.push_back(std::string("<") + kind + ">");
        continue;
      }
      std::uint32_t len = Int(4);
      values.push_back(data.substr(at, len));
      at += len;
    }
    return values;
  }
};

// One decoded message: relation, kind (I/U/D), and each tuple the message
// carries, by its tag ('K' old key, 'O' old row, 'N' new row).
struct Change {
  std::string relation;
  char kind;
  std::map<char, std::vector<std::string>> tuples;
};

struct Decoded {
  std::map<std::string, std::vector<std::string>> columns;  // relation -> column names
  std::vector<Change> changes;
};

Decoded DecodePgoutput(const std::vector<std::string>& messages) {
  Decoded out;
  std::map<std::uint32_t, std::string> names;
  for (const auto& message : messages) {
    Reader r{message};
    char type = static_cast<char>(r.Byte());
    if (type == 'R') {
      std::uint32_t oid = r.Int(4);
      std::string name = r.CString() + ".";
      name += r.CString();
      r.Byte();  // replica identity
      std::vector<std::string> columns;
      for (std::uint32_t n = r.Int(2); n > 0; --n) {
        r.Byte();  // flags
        columns.push_back(r.CString());
        r.Int(4);
        r.Int(4);
      }
      names[oid] = name;
      out.columns[name] = columns;
    } else if (type == 'I' || type == 'U' || type == 'D') {
      Change change{names[r.Int(4)], type, {}};
      while (r.at < message.size()) {
        char tag = static_cast<char>(r.Byte());
        change.tuples[tag] = r.Tuple();
      }
      out.changes.push_back(change);
    }
  }
  return out;
}

// After the script a slot decodes a ticket delete with its event_id, and a
// payment moved to another event with its old event_id: test_decoding shows
// the old key PostgreSQL logs (the replica identity), pgoutput what the
// publication sends (its column lists: only keys, no fans, seats' holders or
// amounts). The slots belong to the change feed's role.
TEST(ChangesSetupTest, SlotDecodesOldEventIdsOfDeletesAndMoves) {
  ScratchDatabase db("seatwatch_changes_setup_decode");
  LoadBookings(db);
  std::string output;
  ASSERT_EQ(RunSetup(db, &output), 0) << output;

  pqxx::connection feed(db.changes_dsn());
  pqxx::nontransaction slots(feed);
  slots.exec("SELECT pg_create_logical_replication_slot('sw_setup_text', 'test_decoding', true)");
  slots.exec("SELECT pg_create_logical_replication_slot('sw_setup_bin', 'pgoutput', true)");

  auto writer = db.Connect();
  pqxx::nontransaction write(*writer);
  // Flushed at commit: the slot decodes only flushed WAL, and the scratch
  // server's default is synchronous_commit = off.
  write.exec("SET synchronous_commit = on");
  write.exec("DELETE FROM tickets WHERE event_id = 7 AND seat = 'S3'");
  write.exec("UPDATE payments SET event_id = 2 WHERE idempotency_key = 'pay-1'");
  write.exec("UPDATE seats SET status = 'held', holder = 'dan' WHERE event_id = 2");

  std::vector<std::string> text;
  for (const auto& r : slots.exec("SELECT data FROM pg_logical_slot_get_changes("
                                  "'sw_setup_text', NULL, NULL)")) {
    std::string line = r[0].c_str();
    if (line.rfind("table ", 0) == 0) text.push_back(line);
  }
  ASSERT_EQ(text.size(), 3u) << ::testing::PrintToString(text);
  EXPECT_EQ(text[0], "table public.tickets: DELETE: event_id[integer]:7 seat[text]:'S3'");
  EXPECT_EQ(text[1].rfind("table public.payments: UPDATE: old-key: idempotency_key[text]:'pay-1' "
                          "event_id[integer]:1 new-tuple: idempotency_key[text]:'pay-1' "
                          "event_id[integer]:2 ",
                          0),
            0u)
      << text[1];

  std::vector<std::string> messages;
  for (const auto& r : slots.exec("SELECT data FROM pg_logical_slot_get_binary_changes("
                                  "'sw_setup_bin', NULL, NULL, 'proto_version', '1', "
                                  "'publication_names', 'seatwatch')")) {
    messages.push_back(pqxx::binarystring(r[0]).str());
  }
  Decoded decoded = DecodePgoutput(messages);
  EXPECT_EQ(decoded.columns["public.tickets"], (std::vector<std::string>{"event_id", "seat"}));
  EXPECT_EQ(decoded.columns["public.payments"],
            (std::vector<std::string>{"idempotency_key", "event_id"}));
  EXPECT_EQ(decoded.columns["public.seats"], (std::vector<std::string>{"event_id", "seat"}));
  ASSERT_EQ(decoded.changes.size(), 3u);
  const Change& del = decoded.changes[0];
  EXPECT_EQ(del.relation, "public.tickets");
  EXPECT_EQ(del.kind, 'D');
  EXPECT_EQ(del.tuples.at('K'), (std::vector<std::string>{"7", "S3"}));
  const Change& move = decoded.changes[1];
  EXPECT_EQ(move.relation, "public.payments");
  EXPECT_EQ(move.kind, 'U');
  EXPECT_EQ(move.tuples.at('K'), (std::vector<std::string>{"pay-1", "1"})) << "the old event";
  EXPECT_EQ(move.tuples.at('N'), (std::vector<std::string>{"pay-1", "2"}));
  const Change& seat = decoded.changes[2];
  EXPECT_EQ(seat.relation, "public.seats");
  EXPECT_EQ(seat.kind, 'U');
  EXPECT_EQ(seat.tuples.count('K'), 0u) << "key unchanged: no old key";
  EXPECT_EQ(seat.tuples.at('N'), (std::vector<std::string>{"2", "S1"})) << "no holder";
}

// Run twice: no error, nothing rebuilt (the index keeps its oid), the same
// end state. An INVALID leftover of the index (a CONCURRENTLY build that was
// cancelled) is rebuilt rather than kept.
TEST(ChangesSetupTest, RunsTwiceAndRebuildsAnInvalidLeftoverIndex) {
  ScratchDatabase db("seatwatch_changes_setup_twice");
  LoadBookings(db);
  db.Exec(
      "CREATE UNIQUE INDEX payments_idempotency_key_event_id_idx "
      "ON payments (idempotency_key, event_id)");
  db.Exec(
      "UPDATE pg_index SET indisvalid = false "
      "WHERE indexrelid = 'payments_idempotency_key_event_id_idx'::regclass");
  std::string leftover = db.Scalar("SELECT 'payments_idempotency_key_event_id_idx'::regclass::oid");

  auto state = [&] {
    return db.Scalar(
               "SELECT string_agg(relname || ':' || relreplident::text, ',' ORDER BY relname) "
               "FROM pg_class WHERE relname IN ('seats', 'tickets', 'payments')") +
           " " +
           db.Scalar(
               "SELECT string_agg(indexrelid::regclass || ':' || indisvalid, ',' "
               "ORDER BY indexrelid::regclass::text) FROM pg_index WHERE indisreplident") +
           " " +
           db.Scalar(
               "SELECT string_agg(tablename || array_to_string(attnames, '+'), ',' "
               "ORDER BY tablename) FROM pg_publication_tables WHERE pubname = 'seatwatch'") +
           " " +
           db.Scalar(
               "SELECT pubinsert::text || pubupdate || pubdelete || pubtruncate "
               "FROM pg_publication WHERE pubname = 'seatwatch'");
  };
  const std::string expected =
      "payments:i,seats:d,tickets:i "
      "payments_idempotency_key_event_id_idx:true,tickets_event_id_seat_key:true "
      "paymentsidempotency_key+event_id,seatsevent_id+seat,ticketsevent_id+seat "
      "truetruetruetrue";

  std::string output;
  ASSERT_EQ(RunSetup(db, &output), 0) << output;
  EXPECT_EQ(state(), expected);
  std::string built = db.Scalar("SELECT 'payments_idempotency_key_event_id_idx'::regclass::oid");
  EXPECT_NE(built, leftover) << "the invalid leftover was kept";

  // A DBA's edit of the publication is put back by a re-run.
  db.Exec("ALTER PUBLICATION seatwatch DROP TABLE seats");
  ASSERT_EQ(RunSetup(db, &output), 0) << output;
  EXPECT_EQ(state(), expected);
  EXPECT_EQ(db.Scalar("SELECT 'payments_idempotency_key_event_id_idx'::regclass::oid"), built);
  ExpectApplicationWritesWork(db);
}

}  // namespace
}  // namespace seatwatch
