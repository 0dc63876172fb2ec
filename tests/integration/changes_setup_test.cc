// queries/booking/changes-setup.sql on a real database: the replica identity
// trap it exists for, the application's writes after it, what a logical slot
// then decodes of a ticket delete and of a payment moved between events, and
// that it can be run again. The script is `seatwatch --print-setup` of the
// shipped config; the same generator on other tables (no primary key, a
// nullable key, a partitioned table, names that need quotes) makes each one
// publishable with the key in its replica identity. Each test has a database of its own (the
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
// publication sends (its column lists: the keys, the replica identity and
// the columns the checks read, never the others such as amounts). The slots
// belong to the change feed's role.
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
  // The key, the replica identity and the columns the checks read (for
  // provenance); none other (payments.amount_cents, ...).
  EXPECT_EQ(decoded.columns["public.tickets"],
            (std::vector<std::string>{"event_id", "seat", "fan"}));
  EXPECT_EQ(decoded.columns["public.payments"],
            (std::vector<std::string>{"idempotency_key", "event_id", "seat", "fan", "status"}));
  EXPECT_EQ(decoded.columns["public.seats"],
            (std::vector<std::string>{"event_id", "seat", "status", "holder", "hold_expires_at"}));
  ASSERT_EQ(decoded.changes.size(), 3u);
  const Change& del = decoded.changes[0];
  EXPECT_EQ(del.relation, "public.tickets");
  EXPECT_EQ(del.kind, 'D');
  EXPECT_EQ(del.tuples.at('K'), (std::vector<std::string>{"7", "S3", "<n>"}));
  const Change& move = decoded.changes[1];
  EXPECT_EQ(move.relation, "public.payments");
  EXPECT_EQ(move.kind, 'U');
  EXPECT_EQ(move.tuples.at('K'), (std::vector<std::string>{"pay-1", "1", "<n>", "<n>", "<n>"}))
      << "the old event; the other columns are not carried";
  EXPECT_EQ(move.tuples.at('N'), (std::vector<std::string>{"pay-1", "2", "S1", "ann", "confirmed"}));
  const Change& seat = decoded.changes[2];
  EXPECT_EQ(seat.relation, "public.seats");
  EXPECT_EQ(seat.kind, 'U');
  EXPECT_EQ(seat.tuples.count('K'), 0u) << "key unchanged: no old key";
  EXPECT_EQ(seat.tuples.at('N'), (std::vector<std::string>{"2", "S1", "held", "dan", "<n>"}));
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
      "paymentsidempotency_key+event_id+seat+fan+status,"
      "seatsevent_id+seat+status+holder+hold_expires_at,ticketsevent_id+seat+fan "
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

// `seatwatch --config <config> --print-setup`: its exit status, its stdout
// in *script.
int PrintSetup(const std::string& config, std::string* script) {
  return testing::RunCommand("'" + testing::SeatwatchBinary() + "' --config '" + config +
                                 "' --print-setup 2>/dev/null",
                             script);
}

TEST(ChangesSetupTest, TheShippedScriptIsPrintSetupOfTheShippedConfig) {
  std::string script;
  ASSERT_EQ(PrintSetup(testing::SourceDir() + "/config/seatwatch.toml", &script), 0) << script;
  EXPECT_EQ(script, testing::ReadFile(testing::SourceDir() + "/queries/booking/changes-setup.sql"))
      << "queries/booking/changes-setup.sql is no longer what --print-setup writes for "
         "config/seatwatch.toml: regenerate it";
}

// Declared checks on tables of every shape the script must handle: the
// ledger's entry has no primary key and no unique index (FULL); a shop's
// order line has a primary key without the key (an index is built); a
// table whose key is nullable (FULL); a partitioned table (its leaves get
// the identity, the root is published); names that need quotes.
TEST(ChangesSetupTest, PrintSetupMakesEveryKindOfTablePublishable) {
  ScratchDatabase db("seatwatch_print_setup");
  db.Exec(
      "CREATE SCHEMA \"Shop\";"
      "CREATE TABLE \"Shop\".product (id integer PRIMARY KEY, stock integer NOT NULL);"
      "CREATE TABLE \"Shop\".\"Order Line\" (id bigserial PRIMARY KEY, "
      "product_id integer NOT NULL, qty integer NOT NULL);"
      "CREATE TABLE account (id integer PRIMARY KEY, balance numeric NOT NULL);"
      "CREATE TABLE entry (account_id integer NOT NULL, amount numeric NOT NULL);"
      "CREATE TABLE coupon (code text PRIMARY KEY, max_uses integer NOT NULL);"
      "CREATE TABLE redemption (id serial PRIMARY KEY, code text, fan text NOT NULL);"
      "CREATE TABLE registration (workshop_id integer NOT NULL, fan text NOT NULL) "
      "PARTITION BY HASH (workshop_id);"
      "CREATE TABLE registration_0 PARTITION OF registration FOR VALUES WITH (MODULUS 2, "
      "REMAINDER 0);"
      "CREATE TABLE registration_1 PARTITION OF registration FOR VALUES WITH (MODULUS 2, "
      "REMAINDER 1);"
      "CREATE UNIQUE INDEX ON registration_1 (workshop_id, fan);"
      "INSERT INTO \"Shop\".product VALUES (1, 5); INSERT INTO account VALUES (1, 0);"
      "INSERT INTO coupon VALUES ('FREE', 2);");
  const std::string dir = testing::MakeTempDir("seatwatch-print-setup");
  const std::string config = dir + "/seatwatch.toml";
  testing::WriteFile(config,
                     "[[invariant]]\nname = \"oversold\"\nhelp = \"Sold beyond stock\"\n"
                     "kind = \"at_most\"\nkey = [\"product_id\"]\n"
                     "rows = { table = \"Shop.Order Line\", columns = [\"product_id\"], "
                     "sum = \"qty\" }\n"
                     "limit = { table = \"Shop.product\", columns = [\"id\"], column = \"stock\" }\n\n"
                     "[[invariant]]\nname = \"balance_drift\"\nhelp = \"Balance is not the sum\"\n"
                     "kind = \"counter\"\nkey = [\"id\"]\ntable = \"account\"\n"
                     "columns = [\"id\"]\ncolumn = \"balance\"\n"
                     "rows = { table = \"entry\", columns = [\"account_id\"], sum = \"amount\" }\n\n"
                     "[[invariant]]\nname = \"coupon_overused\"\nhelp = \"Used beyond max_uses\"\n"
                     "kind = \"at_most\"\nkey = [\"code\"]\n"
                     "rows = { table = \"redemption\", columns = [\"code\"] }\n"
                     "limit = { table = \"coupon\", columns = [\"code\"], column = \"max_uses\" }\n\n"
                     "[[invariant]]\nname = \"workshop_full\"\nhelp = \"Over 3 per workshop\"\n"
                     "kind = \"at_most\"\nkey = [\"workshop_id\"]\n"
                     "rows = { table = \"registration\", columns = [\"workshop_id\"] }\n"
                     "limit = 3\n");
  std::string script;
  ASSERT_EQ(PrintSetup(config, &script), 0) << script;
  EXPECT_NE(script.find("--   Shop.Order Line (product_id)\n"), std::string::npos) << script;
  EXPECT_NE(script.find("('\"Shop\".\"Order Line\"', ARRAY['product_id']::name[],"),
            std::string::npos)
      << script;
  testing::WriteFile(dir + "/setup.sql", script);
  auto run = [&](std::string* output) {
    return testing::RunCommand("'" + testing::SourceDir() + "/scripts/pg-scratch' psql '" +
                                   testing::ScratchPgDir() + "' -X -q -v ON_ERROR_STOP=1 -d " +
                                   db.name() + " -f '" + dir + "/setup.sql' 2>&1",
                               output);
  };
  auto state = [&] {
    return db.Scalar(
               "SELECT string_agg(c.oid::regclass || ':' || c.relreplident::text, ',' "
               "ORDER BY c.oid::regclass::text) FROM pg_class c WHERE c.oid IN ("
               "'\"Shop\".\"Order Line\"'::regclass, '\"Shop\".product'::regclass, "
               "'account'::regclass, 'entry'::regclass, 'coupon'::regclass, "
               "'redemption'::regclass, 'registration'::regclass, 'registration_0'::regclass, "
               "'registration_1'::regclass)") +
           " " +
           db.Scalar("SELECT string_agg(indexrelid::regclass::text, ',' ORDER BY "
                     "indexrelid::regclass::text) FROM pg_index "
                     "WHERE indisreplident") +
           " " +
           db.Scalar("SELECT string_agg(t, ',' ORDER BY t) FROM (SELECT schemaname || '.' || "
                     "tablename || '(' || array_to_string(attnames, '+') || ')' AS t "
                     "FROM pg_publication_tables WHERE pubname = 'seatwatch') p") +
           " " +
           db.Scalar("SELECT pubviaroot::text FROM pg_publication WHERE pubname = 'seatwatch'");
  };
  std::string output;
  ASSERT_EQ(run(&output), 0) << output;
  // "Order Line": its primary key (id) extended by the key; entry: nothing
  // to extend (FULL); redemption: the key is nullable (FULL); the leaves of
  // registration: one has a unique index with the key, the other only FULL;
  // registration itself FULL (what the Relation messages of its changes say).
  const std::string expected =
      "\"Shop\".\"Order Line\":i,\"Shop\".product:d,account:d,coupon:d,entry:f,"
      "redemption:f,registration:f,registration_0:f,registration_1:i "
      "\"Shop\".\"Order Line_id_product_id_idx\",registration_1_workshop_id_fan_idx "
      "Shop.Order Line(id+product_id+qty),Shop.product(id+stock),public.account(id+balance),"
      "public.coupon(code+max_uses),public.entry(account_id+amount),"
      "public.redemption(id+code+fan),public.registration(workshop_id+fan) true";
  EXPECT_EQ(state(), expected) << output;
  EXPECT_NE(output.find("entry gets REPLICA IDENTITY FULL"), std::string::npos) << output;
  // A re-run changes nothing, and the application's writes work on every table.
  ASSERT_EQ(run(&output), 0) << output;
  EXPECT_EQ(state(), expected) << output;
  db.Exec("INSERT INTO \"Shop\".\"Order Line\" (product_id, qty) VALUES (1, 2);"
          "UPDATE \"Shop\".\"Order Line\" SET qty = 3; DELETE FROM \"Shop\".\"Order Line\";"
          "INSERT INTO entry VALUES (1, 5); DELETE FROM entry;"
          "INSERT INTO redemption (code, fan) VALUES ('FREE', 'ann'); DELETE FROM redemption;"
          "INSERT INTO registration SELECT w, 'fan' FROM generate_series(1, 6) w;"
          "UPDATE registration SET fan = 'bob'; DELETE FROM registration;");
}

}  // namespace
}  // namespace seatwatch
