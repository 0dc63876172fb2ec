// The proof of declared entries ([[invariant]] with `kind`) against the
// scratch PostgreSQL's catalog, through the built binary: --check-config
// names the file, line, column and key of a table or column that is not
// there, a where that is not boolean, a sum that is not a number, columns
// that do not compare (exit 2, the compiled SQL not run); with [changes] on
// it prints the ALTER TABLE a key missing from the replica identity needs
// and the index a large table lacks; the daemon refuses to start on a
// declaration that does not prove, and a SIGHUP to one keeps the running
// configuration.
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "support/daemon_process.h"
#include "support/daemon_test.h"
#include "support/http_client.h"
#include "support/test_env.h"

namespace seatwatch {
namespace {

using namespace std::chrono_literals;
using testing::DaemonProcess;
using testing::Sample;
using testing::WaitFor;

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The reference booking pack's first two invariants, as declarations.
constexpr const char* kSoldSeatWithoutTicket =
    "[[invariant]]\n"
    "check = \"booking\"\n"
    "name = \"sold_seat_without_ticket\"\n"
    "help = \"A sold seat has no ticket\"\n"
    "kind = \"exists\"\n"
    "key = [\"event_id\"]\n"
    "rows = { table = \"seats\", columns = [\"event_id\", \"seat\"], where = \"status = 'sold'\" }\n"
    "in = { table = \"tickets\", columns = [\"event_id\", \"seat\"] }\n";

constexpr const char* kFanOverLimit =
    "[[invariant]]\n"
    "check = \"booking\"\n"
    "name = \"fan_over_limit\"\n"
    "help = \"A fan holds or bought more seats than the limit\"\n"
    "kind = \"at_most\"\n"
    "key = [\"event_id\"]\n"
    "rows = { table = \"seats\", columns = [\"event_id\", \"holder\"], expires = "
    "\"hold_expires_at\", where = \"status = 'sold' OR (status = 'held' AND hold_expires_at > "
    "now())\" }\n"
    "limit = 4\n";

// A double-entry ledger: a balance is the sum of its entries (numeric).
constexpr const char* kLedgerSchema =
    "CREATE TABLE account (id integer PRIMARY KEY, balance numeric(12,2) NOT NULL);\n"
    "CREATE TABLE entry (account_id integer NOT NULL, amount numeric(12,2) NOT NULL, "
    "memo text);\n"
    "INSERT INTO account SELECT a, 0 FROM generate_series(1, 100) a;\n"
    "INSERT INTO entry SELECT 1 + n % 100, 1.25 FROM generate_series(1, 20000) n;\n"
    "UPDATE account SET balance = 250.00;\n"
    "UPDATE account SET balance = 249.00 WHERE id = 7;\n"
    "ANALYZE account; ANALYZE entry;\n";

constexpr const char* kBalance =
    "[[invariant]]\n"
    "name = \"balance_drift\"\n"
    "help = \"An account's balance is not the sum of its entries\"\n"
    "kind = \"counter\"\n"
    "key = [\"id\"]\n"
    "table = \"account\"\n"
    "columns = [\"id\"]\n"
    "column = \"balance\"\n"
    "rows = { table = \"entry\", columns = [\"account_id\"], sum = \"amount\" }\n";

class DeclaredProofTest : public testing::DaemonTest {
 protected:
  DeclaredProofTest() : DaemonTest("sw_declared_proof", "seatwatch-declared-proof") {
    db_.Exec("INSERT INTO seats (event_id, seat, status, holder) "
             "SELECT e, 'S' || n, CASE WHEN n % 5 = 0 THEN 'sold' ELSE 'free' END, "
             "CASE WHEN n % 5 = 0 THEN 'fan' END FROM generate_series(1, 3) e, "
             "generate_series(1, 20) n");
    db_.Exec("INSERT INTO tickets (event_id, seat, fan) SELECT event_id, seat, holder FROM seats "
             "WHERE status = 'sold' AND NOT (event_id = 2 AND seat = 'S5')");
  }

  // A config of `entries` (and `extra` TOML before them); the line of
  // `marker` within it in *line when asked.
  void WriteConfig(const std::string& entries, const std::string& marker = "",
                   int* line = nullptr, const std::string& extra = "") {
    std::string toml = "[http]\nlisten = \"127.0.0.1:" + std::to_string(port_) +
                       "\"\n\n[poll]\ninterval = \"1s\"\n\n[locks]\nenabled = false\n\n" + extra +
                       "\n" + entries;
    if (line) {
      auto at = toml.find(marker);
      ASSERT_NE(at, std::string::npos) << marker;
      *line = static_cast<int>(std::count(toml.begin(), toml.begin() + at, '\n')) + 1;
    }
    config_ = dir_ + "/seatwatch.toml";
    testing::WriteFile(config_, toml);
  }

  std::string At(int line) const { return config_ + ":" + std::to_string(line) + ":"; }

  int Run(const std::vector<std::string>& args, std::string* log) {
    DaemonProcess process(args, Env());
    bool ended = process.WaitExit(60s);
    *log = process.Log();
    EXPECT_TRUE(ended) << "seatwatch did not end within 60s:\n" << *log;
    return process.Stop();
  }
};

TEST_F(DeclaredProofTest, TheBookingDeclarationsProve) {
  WriteConfig(std::string(kSoldSeatWithoutTicket) + "\n" + kFanOverLimit);
  std::string log;
  ASSERT_EQ(Run({"--config", config_, "--check-config"}, &log), 0) << log;
  EXPECT_TRUE(Has(log, "invariant sold_seat_without_ticket (exists): tables, columns and "
                       "expressions prove on the database\n"))
      << log;
  EXPECT_TRUE(Has(log, "invariant fan_over_limit (at_most): tables, columns and expressions "
                       "prove on the database\n"))
      << log;
  EXPECT_TRUE(Has(log, "every query runs and returns its configured columns")) << log;
  EXPECT_FALSE(Has(log, "warning:")) << log;  // [changes] off: no feed advice
}

TEST_F(DeclaredProofTest, AColumnThatIsNotThereIsNamedWithItsLine) {
  std::string entry = kSoldSeatWithoutTicket;
  const std::string seat = "\"seat\"], where";
  entry.replace(entry.find(seat), seat.size(), "\"seet\"], where");
  int line = 0;
  WriteConfig(entry, "rows = {", &line);
  std::string log;
  EXPECT_EQ(Run({"--config", config_, "--check-config"}, &log), 2) << log;
  EXPECT_TRUE(Has(log, "seatwatch: " + At(line))) << log;
  EXPECT_TRUE(Has(log, ": invariant.rows.columns: column \"seet\" is not a column of seats "
                       "(names are taken as the catalog stores them; its columns: event_id, "
                       "seat, status, holder, hold_expires_at, version)\n"))
      << log;
  // The compiled query, which would fail less precisely, is not run.
  EXPECT_FALSE(Has(log, "invariant.sql")) << log;
  EXPECT_FALSE(Has(log, "every query runs")) << log;
}

TEST_F(DeclaredProofTest, EachWrongPartIsNamedByItsKey) {
  // Four faults in four entries: a table that is not there, a where that
  // is not boolean, columns that do not compare, a sum that is no number.
  std::string missing_table = kSoldSeatWithoutTicket;
  missing_table.replace(missing_table.find("table = \"tickets\""), 17, "table = \"Tickets\"");
  std::string text_where = kFanOverLimit;
  text_where.replace(text_where.find("where = \"status = 'sold' OR"), 27, "where = \"holder OR");
  text_where.replace(text_where.find("check = \"booking\""), 17, "check = \"limits\"");
  std::string mismatched =
      "[[invariant]]\n"
      "name = \"paid_seat_without_ticket\"\n"
      "help = \"A paid seat has no ticket\"\n"
      "kind = \"exists\"\n"
      "key = [\"event_id\"]\n"
      "rows = { table = \"payments\", columns = [\"event_id\", \"amount_cents\"] }\n"
      "in = { table = \"tickets\", columns = [\"event_id\", \"seat\"] }\n";
  std::string text_sum =
      "[[invariant]]\n"
      "name = \"fan_spend\"\n"
      "help = \"A fan spent more than allowed\"\n"
      "kind = \"at_most\"\n"
      "key = [\"event_id\"]\n"
      "rows = { table = \"payments\", columns = [\"event_id\", \"fan\"], sum = \"seat\" }\n"
      "limit = 100000\n";
  WriteConfig(missing_table + "\n" + text_where + "\n" + mismatched + "\n" + text_sum);
  std::string log;
  EXPECT_EQ(Run({"--config", config_, "--check-config"}, &log), 2) << log;
  EXPECT_TRUE(Has(log, ": invariant.in.table: table Tickets does not exist (or is not visible "
                       "on the search_path, or not readable): names are taken as the catalog "
                       "stores them, case and all (\"Tickets\" in SQL)\n"))
      << log;
  EXPECT_TRUE(Has(log, ": invariant.rows.where: argument of OR must be type boolean, not type "
                       "text\n"))
      << log;
  EXPECT_TRUE(Has(log, ": invariant.in.columns: [event_id, seat] of tickets do not compare with "
                       "rows.columns [event_id, amount_cents] of payments: operator does not "
                       "exist: integer = text\n"))
      << log;
  EXPECT_TRUE(Has(log, ": invariant.rows.sum: function sum(text) does not exist\n")) << log;
  EXPECT_FALSE(Has(log, "every query runs")) << log;
}

TEST_F(DeclaredProofTest, WithTheFeedOnItSaysWhatTheReplicaIdentityAndIndexesNeed) {
  db_.Exec(kLedgerSchema);
  WriteConfig(std::string(kSoldSeatWithoutTicket) + "\n" + kBalance, "", nullptr,
              "[changes]\nenabled = true\n");
  std::string log;
  EXPECT_EQ(Run({"--config", config_, "--check-config"}, &log), 0) << log;
  EXPECT_TRUE(Has(log, "invariant balance_drift (counter): tables, columns and expressions prove "
                       "on the database\n"))
      << log;
  // tickets has no primary key: its UNIQUE (event_id, seat) index serves.
  EXPECT_TRUE(Has(log, "the replica identity of tickets (DEFAULT, and it has no primary key) does "
                       "not carry event_id: a DELETE (or an UPDATE that changes it) names no key, "
                       "and seatwatch answers it with a full pass; run: ALTER TABLE tickets "
                       "REPLICA IDENTITY USING INDEX tickets_event_id_seat_key;\n"))
      << log;
  // entry has no unique index at all: FULL is the only way.
  EXPECT_TRUE(Has(log, "the replica identity of entry (DEFAULT, and it has no primary key) does "
                       "not carry account_id: a DELETE (or an UPDATE that changes it) names no "
                       "key, and seatwatch answers it with a full pass; run: ALTER TABLE entry "
                       "REPLICA IDENTITY FULL;\n"))
      << log;
  EXPECT_TRUE(Has(log, "entry (about 20000 rows) has no index that starts with account_id: each "
                       "key read by itself (a recheck of a few keys, a key out of balance in a "
                       "full pass) reads the whole table; create one: CREATE INDEX "
                       "CONCURRENTLY ON entry (account_id);\n"))
      << log;
  // seats' primary key starts with event_id and carries it; account is small.
  EXPECT_FALSE(Has(log, "replica identity of seats")) << log;
  EXPECT_FALSE(Has(log, "account (about")) << log;

  db_.Exec("ALTER TABLE tickets REPLICA IDENTITY USING INDEX tickets_event_id_seat_key");
  db_.Exec("CREATE INDEX ON entry (account_id)");
  db_.Exec("ALTER TABLE entry REPLICA IDENTITY FULL");
  EXPECT_EQ(Run({"--config", config_, "--check-config"}, &log), 0) << log;
  EXPECT_FALSE(Has(log, "replica identity of")) << log;
  EXPECT_FALSE(Has(log, "has no index")) << log;
}

// Without the feed, a full pass still reads a key by itself when the
// balance gate finds it out of balance: an exists entry on a large table
// with no index on its key gets the same advice; a counter (read in one
// pass, never key by key) does not.
TEST_F(DeclaredProofTest, AGatedEntryOnALargeTableWithoutAKeyIndexIsAdvisedOne) {
  db_.Exec(kLedgerSchema);
  int line = 0;
  WriteConfig(std::string(kBalance) +
                  "\n[[invariant]]\n"
                  "name = \"entry_without_account\"\n"
                  "help = \"An entry names no account\"\n"
                  "kind = \"exists\"\n"
                  "key = [\"account_id\"]\n"
                  "rows = { table = \"entry\", columns = [\"account_id\"] }\n"
                  "in = { table = \"account\", columns = [\"id\"] }\n",
              "key = [\"account_id\"]", &line);
  std::string log;
  EXPECT_EQ(Run({"--config", config_, "--check-config"}, &log), 0) << log;
  EXPECT_TRUE(Has(log, "warning: " + At(line) + "7: invariant.key: entry (about 20000 rows) has no "
                       "index that starts with account_id: each key read by itself"))
      << log;
  EXPECT_FALSE(Has(log, "replica identity")) << "the feed is off: " << log;

  WriteConfig(kBalance);
  EXPECT_EQ(Run({"--config", config_, "--check-config"}, &log), 0) << log;
  EXPECT_FALSE(Has(log, "has no index")) << log;
}

TEST_F(DeclaredProofTest, TheLedgerDriftIsCountedInItsOwnUnits) {
  db_.Exec(kLedgerSchema);
  WriteConfig(kBalance);
  DaemonProcess daemon({"--config", config_}, Env());
  ASSERT_TRUE(WaitReady()) << daemon.Log();
  std::string text;
  ASSERT_TRUE(WaitFor([&] {
    text = Metrics();
    return Sample(text, "seatwatch_check_success{check=\"balance_drift\"}") == 1;
  }, 20s)) << daemon.Log();
  // 200 entries of 1.25 make 250.00; account 7 says 249.00.
  EXPECT_EQ(Sample(text, "seatwatch_invariant_violations{invariant=\"balance_drift\",id=\"7\"}"),
            1.0)
      << text;
  EXPECT_EQ(Sample(text, "seatwatch_invariant_ok{invariant=\"balance_drift\"}"),
            0.0)
      << text;
  EXPECT_EQ(daemon.Stop(), 0) << daemon.Log();
}

TEST_F(DeclaredProofTest, TheDaemonRefusesADeclarationThatDoesNotProve) {
  std::string entry = kSoldSeatWithoutTicket;
  entry.replace(entry.find("table = \"tickets\""), 17, "table = \"ticket\"");
  WriteConfig(entry);
  std::string log;
  EXPECT_EQ(Run({"--config", config_}, &log), 2) << log;
  EXPECT_TRUE(Has(log, "invariant.in.table: table ticket does not exist")) << log;
  EXPECT_TRUE(Has(log, "refusing to start: a scoped_sql was proved wrong or a declared invariant "
                       "does not prove"))
      << log;
  EXPECT_FALSE(Has(log, "seatwatch started")) << log;
  EXPECT_EQ(testing::HttpGet(port_, "/healthz").status, 0) << "nothing listens";

  // Running with a good declaration, a reload to the bad one is refused.
  WriteConfig(kSoldSeatWithoutTicket);
  DaemonProcess daemon({"--config", config_}, Env());
  ASSERT_TRUE(WaitReady()) << daemon.Log();
  ASSERT_TRUE(WaitFor([&] {
    return Sample(Metrics(), "seatwatch_invariant_violations{invariant="
                             "\"sold_seat_without_ticket\",event_id=\"2\"}") == 1;
  }, 20s)) << daemon.Log();
  WriteConfig(entry);
  daemon.Signal(SIGHUP);
  ASSERT_TRUE(WaitFor([&] { return Has(daemon.Log(), "reload refused"); }, 20s)) << daemon.Log();
  EXPECT_TRUE(Has(daemon.Log(), "keeping the running configuration")) << daemon.Log();
  double before = Sample(Metrics(), "seatwatch_last_poll_timestamp_seconds");
  EXPECT_TRUE(WaitFor([&] {
    return Sample(Metrics(), "seatwatch_last_poll_timestamp_seconds") > before;
  }, 10s)) << daemon.Log();
  EXPECT_EQ(Sample(Metrics(), "seatwatch_check_success{check=\"booking\"}"), 1) << daemon.Log();
  EXPECT_EQ(daemon.Stop(), 0) << daemon.Log();
}

}  // namespace
}  // namespace seatwatch
