// The change feed against the real scratch PostgreSQL (wal_level = logical):
// its temporary slot on a dedicated session, what a drain returns, and each
// way the slot is lost (a terminated backend, a statement timeout on the slot
// session, max_slot_wal_keep_size invalidation) ending in a new slot of a new
// generation; creation bounded while a writer runs; a truncate unmappable;
// incremental mode off, with the reason, without wal_level = logical or
// without the REPLICATION attribute.
#include "changes/change_feed.h"
#include "changes/drain_cost_policy.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include <pqxx/connection>
#include <pqxx/except>
#include <pqxx/nontransaction>
#include <pqxx/result>
#include <pqxx/transaction>

#include "changes/feed_verdict.h"
#include "changes/publication_inspector.h"
#include "config/config.h"
#include "support/change_feed_fixtures.h"
#include "support/incremental_daemon.h"
#include "support/scratch_db.h"
#include "support/stall_proxy.h"
#include "support/test_env.h"

namespace seatwatch::changes {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::BookingTables;
using testing::IncrementalConfig;
using testing::KeysOf;
using testing::ScratchDatabase;

constexpr const char* kDb = "sw_change_feed";

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

class ChangeFeedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = std::make_unique<ScratchDatabase>(kDb);
    // The shipped setup script, as a DBA runs it (psql, not in a transaction:
    // it builds an index CONCURRENTLY).
    testing::RunChangesSetup(*db_);
    db_->Exec("CREATE TABLE filler (id int, pad text)");  // in no publication
    db_->Exec("INSERT INTO seats (event_id, seat) SELECT e, 's' || s "
              "FROM generate_series(1, 9) e, generate_series(1, 20) s");
  }

  ChangeFeedOptions Options(const std::string& prefix) const {
    return testing::BookingFeedOptions(db_->changes_dsn(), prefix);
  }

  // A writer whose commits are flushed (so decodable) when COMMIT returns:
  // the cluster runs with synchronous_commit = off.
  std::unique_ptr<pqxx::connection> Writer() const {
    auto connection = db_->Connect();
    pqxx::nontransaction tx(*connection);
    tx.exec0("SET synchronous_commit = on");
    return connection;
  }

  // Commits `sql` on a flushing writer; returns the transaction's xid.
  std::uint64_t Commit(const std::string& sql) const {
    auto connection = Writer();
    pqxx::work tx(*connection);
    tx.exec(sql);
    std::uint64_t xid = tx.exec1("SELECT pg_current_xact_id()::text")[0].as<std::uint64_t>();
    tx.commit();
    return xid;
  }

  // The slots of the cluster with this prefix, as "name:temporary:active_pid".
  std::vector<std::string> Slots(const std::string& prefix) const {
    std::vector<std::string> slots;
    pqxx::connection connection(testing::ScratchDsn("postgres"));
    pqxx::nontransaction tx(connection);
    for (const auto& row : tx.exec_params(
             "SELECT slot_name || ':' || temporary || ':' || coalesce(active_pid, 0) "
             "FROM pg_replication_slots WHERE slot_name LIKE $1 || '\\_%' ORDER BY 1",
             prefix)) {
      slots.push_back(row[0].c_str());
    }
    return slots;
  }

  // Waits (bounded) until no backend has this pid: a terminated backend's
  // exit, and with it its temporary slot, takes a moment.
  bool WaitGone(int pid) const {
    pqxx::connection connection(testing::ScratchDsn("postgres"));
    for (auto deadline = Clock::now() + 10s; Clock::now() < deadline;) {
      pqxx::nontransaction tx(connection);
      if (tx.exec_params1("SELECT count(*) FROM pg_stat_activity WHERE pid = $1", pid)[0]
              .as<int>() == 0) {
        return true;
      }
      tx.commit();
      std::this_thread::sleep_for(50ms);
    }
    return false;
  }

  std::unique_ptr<ScratchDatabase> db_;
};

// The changes role exists once some changes DSN was asked for.
void ScratchChangesRoleReady() { testing::ScratchChangesDsn("postgres"); }

TEST_F(ChangeFeedTest, CreatesATemporarySlotAndDrainsTheKeysOfACommit) {
  ChangeFeed feed(Options("sw_create"));
  auto start = Clock::now();
  ChangeBatch first = feed.Drain();
  double create_ms = Ms(Clock::now() - start);
  ASSERT_TRUE(first.feed_up) << feed.off_reason();
  EXPECT_EQ(first.generation, 1u);
  EXPECT_TRUE(first.transactions.empty());
  EXPECT_EQ(feed.generation_reason(), ResyncReason::kStartup);
  // Temporary, held by the feed's own backend, named <prefix>_<pid>_<n>.
  std::string expected = "sw_create_" + std::to_string(getpid()) + "_1";
  EXPECT_EQ(feed.slot_name(), expected);
  EXPECT_EQ(Slots("sw_create"),
            std::vector<std::string>{expected + ":true:" + std::to_string(feed.backend_pid())});

  std::uint64_t xid = Commit(
      "UPDATE seats SET status = 'held', holder = 'f1' WHERE event_id = 3 AND seat = 's1';"
      "INSERT INTO tickets (event_id, seat, fan) VALUES (4, 's2', 'f2');"
      "INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents) "
      "VALUES ('k1', 5, 's3', 'f3', 100)");
  std::uint64_t other = Commit("DELETE FROM tickets WHERE event_id = 4");
  start = Clock::now();
  ChangeBatch batch = feed.Drain();
  double drain_ms = Ms(Clock::now() - start);
  ASSERT_TRUE(batch.feed_up);
  EXPECT_EQ(batch.generation, 1u);
  ASSERT_EQ(batch.transactions.size(), 2u);
  // In commit order, with the 32-bit xid of each.
  EXPECT_EQ(batch.transactions[0].xid, static_cast<std::uint32_t>(xid));
  EXPECT_EQ(batch.transactions[1].xid, static_cast<std::uint32_t>(other));
  const auto& keys = batch.transactions[0].keys;
  EXPECT_EQ(keys.at("seats"), std::set<std::string>{"3"});
  EXPECT_EQ(keys.at("tickets"), std::set<std::string>{"4"});
  EXPECT_EQ(keys.at("payments"), std::set<std::string>{"5"});
  // A ticket delete: its old key from the replica identity the script gave.
  EXPECT_EQ(batch.transactions[1].keys.at("tickets"), std::set<std::string>{"4"});
  EXPECT_TRUE(batch.unmappable.empty()) << batch.unmappable;
  FeedStats stats = feed.stats();
  EXPECT_TRUE(stats.up);
  EXPECT_EQ(stats.decoded_total, 4u);
  EXPECT_EQ(stats.resyncs_of(ResyncReason::kStartup), 1u);
  EXPECT_GE(stats.lag_bytes, 0);
  EXPECT_GT(stats.drain_duration_seconds, 0);
  std::string text = feed.RenderMetrics();
  EXPECT_NE(text.find("\nseatwatch_changes_up 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nseatwatch_changes_decoded_total 4\n"), std::string::npos) << text;
  // Consumed: the next drain is empty.
  EXPECT_TRUE(feed.Drain().transactions.empty());
  std::cerr << "slot created and first drain in " << create_ms << " ms; drain of 2 commits "
            << drain_ms << " ms\n";
}

TEST_F(ChangeFeedTest, ACommitOfAnUnwatchedTableGivesNoKeys) {
  ChangeFeed feed(Options("sw_unwatched"));
  ASSERT_TRUE(feed.Drain().feed_up) << feed.off_reason();
  Commit("INSERT INTO filler SELECT g, 'x' FROM generate_series(1, 100) g");
  ChangeBatch batch = feed.Drain();
  ASSERT_TRUE(batch.feed_up);
  EXPECT_TRUE(batch.transactions.empty());
  EXPECT_EQ(feed.stats().decoded_total, 0u);  // not in the publication: never sent
  // And a watched table after it still is.
  Commit("UPDATE seats SET version = version + 1 WHERE event_id = 9");
  EXPECT_EQ(KeysOf(feed.Drain(), "seats"), std::set<std::string>{"9"});
}

TEST_F(ChangeFeedTest, ATerminatedBackendIsSlotLostAndANewGeneration) {
  ChangeFeed feed(Options("sw_terminate"));
  ASSERT_TRUE(feed.Drain().feed_up) << feed.off_reason();
  std::string old_slot = feed.slot_name();
  int old_pid = feed.backend_pid();
  db_->Exec("SELECT pg_terminate_backend(" + std::to_string(old_pid) + ")");
  ASSERT_TRUE(WaitGone(old_pid));
  ChangeBatch batch = feed.Drain();
  EXPECT_TRUE(batch.feed_up) << feed.off_reason();
  EXPECT_EQ(batch.generation, 2u);
  EXPECT_EQ(feed.generation_reason(), ResyncReason::kSlotLost);
  FeedStats stats = feed.stats();
  EXPECT_EQ(stats.resyncs_of(ResyncReason::kSlotLost), 1u);
  EXPECT_EQ(stats.resyncs_of(ResyncReason::kError), 0u);
  EXPECT_NE(feed.backend_pid(), old_pid);
  EXPECT_NE(feed.slot_name(), old_slot);
  EXPECT_EQ(Slots("sw_terminate"), std::vector<std::string>{feed.slot_name() + ":true:" +
                                                            std::to_string(feed.backend_pid())});
  // The new slot works.
  Commit("UPDATE seats SET version = version + 1 WHERE event_id = 2");
  EXPECT_EQ(KeysOf(feed.Drain(), "seats"), std::set<std::string>{"2"});
}

// The statements every drain runs on the feed's plain session (the slot's
// position, the publication's coverage) are named prepared statements: the
// server plans them once per session, not at every drain, where planning
// those catalog views cost several times running them. A new session (its
// backend terminated) prepares them again.
struct PreparedRuns {
  std::map<std::string, long> runs;  // name -> generic + custom plans used
  long position_generic = 0;
  int backend_pid = 0;
};

PreparedRuns PreparedOn(ChangeFeed& feed) {
  PreparedRuns out;
  std::shared_ptr<pqxx::connection> connection = feed.shared_connection();
  if (!connection) return out;
  out.backend_pid = connection->backendpid();
  pqxx::nontransaction tx(*connection);
  for (const auto& row : tx.exec(
           "SELECT name, generic_plans + custom_plans, generic_plans "
           "FROM pg_prepared_statements WHERE name LIKE 'seatwatch\\_%' ORDER BY name")) {
    out.runs[row[0].c_str()] = row[1].as<long>();
    if (std::string(row[0].c_str()) == "seatwatch_slot_position") {
      out.position_generic = row[2].as<long>();
    }
  }
  return out;
}

TEST_F(ChangeFeedTest, EveryDrainsStatementsArePreparedOncePerSession) {
  ChangeFeed feed(Options("sw_prepared"));
  ASSERT_TRUE(feed.Drain().feed_up) << feed.off_reason();
  for (int i = 0; i < 8; ++i) {
    Commit("UPDATE seats SET version = version + 1 WHERE event_id = " + std::to_string(i + 1));
    ASSERT_EQ(KeysOf(feed.Drain(), "seats"), std::set<std::string>{std::to_string(i + 1)});
  }
  PreparedRuns first = PreparedOn(feed);
  // Nine drains: the position nine times, the coverage after each drain and
  // once before the slot was made.
  EXPECT_EQ(first.runs, (std::map<std::string, long>{{"seatwatch_coverage_publication", 10},
                                                     {"seatwatch_coverage_relations", 10},
                                                     {"seatwatch_slot_position", 9}}));
  // Past the server's five custom plans, the position runs on its generic
  // plan: not planned again.
  EXPECT_GE(first.position_generic, 1);

  ASSERT_NE(first.backend_pid, 0);
  db_->Exec("SELECT pg_terminate_backend(" + std::to_string(first.backend_pid) + ")");
  ASSERT_TRUE(WaitGone(first.backend_pid));
  ChangeBatch batch = feed.Drain();
  for (auto deadline = Clock::now() + 15s; !batch.feed_up && Clock::now() < deadline;) {
    std::this_thread::sleep_for(200ms);
    batch = feed.Drain();
  }
  ASSERT_TRUE(batch.feed_up) << feed.off_reason();
  EXPECT_EQ(batch.generation, 2u);
  Commit("UPDATE seats SET version = version + 1 WHERE event_id = 9");
  EXPECT_EQ(KeysOf(feed.Drain(), "seats"), std::set<std::string>{"9"});
  PreparedRuns second = PreparedOn(feed);
  EXPECT_NE(second.backend_pid, first.backend_pid);
  EXPECT_EQ(second.runs.size(), 3u);
  EXPECT_GE(second.runs["seatwatch_slot_position"], 2);
  EXPECT_GE(second.runs["seatwatch_coverage_relations"], 2);
}

// The walsender's CPU so far (utime + stime of /proc/<pid>/stat), seconds.
double CpuSeconds(int pid) {
  std::string stat = testing::ReadFile("/proc/" + std::to_string(pid) + "/stat");
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string field;
  double ticks = 0;
  // After the command: state is field 3; utime and stime are 14 and 15.
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i >= 14) ticks += std::stod(field);
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// The stream decodes each WAL record once: a million rows of a table in no
// publication cost the walsender their decoding, then nothing more, drain
// after drain (a slot read by SQL calls decodes them again from its restart
// point at each call until a running-xacts record moves it). No statement
// of the feed waits for the decoding, so a short statement_timeout keeps
// the slot.
TEST_F(ChangeFeedTest, AMillionUnwatchedRowsAreDecodedOnceAndKeepTheSlot) {
  ChangeFeedOptions options = Options("sw_once");
  options.slot.statement_timeout = 300ms;
  ChangeFeed feed(options);
  ASSERT_TRUE(feed.Drain().feed_up) << feed.off_reason();
  int pid = feed.backend_pid();
  std::string slot = feed.slot_name();
  Commit("INSERT INTO filler SELECT g, 'padding' FROM generate_series(1, 1000000) g");
  Commit("UPDATE seats SET version = version + 1 WHERE event_id = 3");
  std::set<std::string> keys;
  int drains = 0;
  for (auto deadline = Clock::now() + 60s; keys.empty() && Clock::now() < deadline; ++drains) {
    ChangeBatch batch = feed.Drain();
    ASSERT_TRUE(batch.feed_up) << feed.off_reason();
    keys = KeysOf(batch, "seats");
  }
  EXPECT_EQ(keys, std::set<std::string>{"3"});
  double decoded = CpuSeconds(pid);
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(feed.Drain().feed_up) << feed.off_reason();
  double again = CpuSeconds(pid) - decoded;
  std::cerr << "walsender CPU: " << decoded << " s through the million rows (" << drains
            << " drains), " << again << " s over the next 10 drains\n";
  EXPECT_GT(decoded, 0.1);  // the measure sees the decoding
  EXPECT_LT(again, 0.05);   // and nothing decoded again
  EXPECT_EQ(feed.backend_pid(), pid);
  EXPECT_EQ(feed.slot_name(), slot);
  EXPECT_EQ(feed.stats().resyncs_of(ResyncReason::kError), 0u);
  EXPECT_EQ(feed.stats().resyncs_of(ResyncReason::kSlotLost), 0u);
}

TEST_F(ChangeFeedTest, CreationBlockedByAWriterIsBoundedAndLeavesNoSlot) {
  auto writer = db_->Connect();
  pqxx::work open(*writer);
  open.exec0("INSERT INTO filler VALUES (1, 'open')");  // holds an xid
  ChangeFeedOptions options = Options("sw_blocked");
  options.slot.create_timeout = 1s;
  ChangeFeed feed(options);
  auto start = Clock::now();
  ChangeBatch batch = feed.Drain();
  auto waited = Clock::now() - start;
  EXPECT_FALSE(batch.feed_up);
  EXPECT_GE(waited, 1s);
  EXPECT_LT(waited, 6s);  // create_timeout, not forever
  EXPECT_NE(feed.off_reason().find("cannot create the replication slot"), std::string::npos)
      << feed.off_reason();
  EXPECT_FALSE(feed.stats().up);
  EXPECT_TRUE(Slots("sw_blocked").empty());
  EXPECT_NE(feed.RenderMetrics().find("\nseatwatch_changes_up 0\n"), std::string::npos);
  open.commit();
  // After the backoff (250 ms first), the next attempt succeeds.
  std::this_thread::sleep_for(400ms);
  batch = feed.Drain();
  EXPECT_TRUE(batch.feed_up) << feed.off_reason();
  EXPECT_EQ(batch.generation, 1u);
  EXPECT_EQ(feed.off_reason(), "");
  EXPECT_EQ(Slots("sw_blocked").size(), 1u);
  std::cerr << "creation behind an open writer gave up after " << Ms(waited)
            << " ms (create_timeout 1000 ms)\n";
}

TEST_F(ChangeFeedTest, AbortCancelsACreationInFlight) {
  auto writer = db_->Connect();
  pqxx::work open(*writer);
  open.exec0("INSERT INTO filler VALUES (1, 'open')");
  ChangeFeedOptions options = Options("sw_abort");
  options.slot.create_timeout = 30s;
  ChangeFeed feed(options);
  std::thread aborter([&feed] {
    std::this_thread::sleep_for(500ms);
    feed.Abort();
  });
  auto start = Clock::now();
  ChangeBatch batch = feed.Drain();
  auto took = Clock::now() - start;
  aborter.join();
  EXPECT_FALSE(batch.feed_up);
  EXPECT_LT(took, 2500ms);  // SIGTERM: shutdown within 2 s of the abort
  EXPECT_FALSE(feed.Drain().feed_up);  // and stays down
  EXPECT_TRUE(Slots("sw_abort").empty());
  std::cerr << "Drain returned " << Ms(took) << " ms after start (abort at 500 ms)\n";
}

// A path that stops answering (a stalled proxy that also holds new
// connections): the slot session's own watchdog drops the connection, so a
// drain returns, the feed is down, and a new slot follows once the path
// answers.
TEST_F(ChangeFeedTest, AStalledPathIsDroppedByTheSlotSessionsWatchdog) {
  ScratchChangesRoleReady();
  testing::StallProxy proxy(testing::ScratchTcpPort());
  ChangeFeedOptions options = Options("sw_stall");
  options.slot.dsn = "host=127.0.0.1 port=" + std::to_string(proxy.port()) + " user=" +
                     testing::kChangesRole + " dbname=" + kDb;
  options.slot.statement_timeout = 1s;
  options.slot.connect_timeout = 1s;
  ChangeFeed feed(options);
  ASSERT_TRUE(feed.Drain().feed_up) << feed.off_reason();
  proxy.Stall();
  auto start = Clock::now();
  ChangeBatch batch = feed.Drain();
  auto took = Clock::now() - start;
  EXPECT_FALSE(batch.feed_up);
  // statement_timeout 1 s + the watchdog's 2 s margin + its grace, then a
  // reconnect attempt bounded by connect_timeout 1 s: not the minutes of a
  // stalled TCP connection.
  EXPECT_LT(took, 10s);
  EXPECT_EQ(feed.stats().resyncs_of(ResyncReason::kSlotLost), 1u);
  proxy.Resume();
  batch = feed.Drain();
  for (auto deadline = Clock::now() + 15s; !batch.feed_up && Clock::now() < deadline;) {
    std::this_thread::sleep_for(300ms);  // the creation backoff
    batch = feed.Drain();
  }
  EXPECT_TRUE(batch.feed_up) << feed.off_reason();
  EXPECT_EQ(batch.generation, 2u);
  std::cerr << "a drain through a stalled path returned after " << Ms(took) << " ms\n";
}

TEST_F(ChangeFeedTest, MaxSlotWalKeepSizeInvalidationIsSlotLost) {
  struct Restore {
    ~Restore() {
      try {
        pqxx::connection admin(testing::ScratchDsn("postgres"));
        pqxx::nontransaction tx(admin);
        tx.exec("ALTER SYSTEM RESET max_slot_wal_keep_size");
        tx.exec("SELECT pg_reload_conf()");
      } catch (const std::exception& e) {
        ADD_FAILURE() << "max_slot_wal_keep_size not restored: " << e.what();
      }
    }
  } restore;
  {
    pqxx::connection admin(testing::ScratchDsn("postgres"));
    pqxx::nontransaction tx(admin);
    tx.exec("ALTER SYSTEM SET max_slot_wal_keep_size = '1MB'");
    tx.exec("SELECT pg_reload_conf()");
  }
  ChangeFeed feed(Options("sw_keep"));
  ASSERT_TRUE(feed.Drain().feed_up) << feed.off_reason();
  int old_pid = feed.backend_pid();
  // WAL beyond what the slot may keep, then a checkpoint, which invalidates
  // the slot and terminates the backend holding it.
  for (int i = 0; i < 3; ++i) {
    Commit("INSERT INTO filler SELECT g, 'x' FROM generate_series(1, 1000) g");
    db_->Exec("SELECT pg_switch_wal()");
  }
  db_->Exec("CHECKPOINT");
  ASSERT_TRUE(WaitGone(old_pid));
  std::string log = testing::ReadFile(testing::ScratchPgDir() + "/postgres.log");
  EXPECT_NE(log.find("terminating process " + std::to_string(old_pid) +
                     " to release replication slot \"" + feed.slot_name() + "\""),
            std::string::npos);
  ChangeBatch batch = feed.Drain();
  EXPECT_TRUE(batch.feed_up) << feed.off_reason();
  EXPECT_EQ(batch.generation, 2u);
  EXPECT_EQ(feed.generation_reason(), ResyncReason::kSlotLost);
  EXPECT_EQ(feed.stats().resyncs_of(ResyncReason::kSlotLost), 1u);
}

TEST_F(ChangeFeedTest, ADrainIsBoundedByMaxChangesWithoutSplittingATransaction) {
  ChangeFeedOptions options = Options("sw_bounded");
  options.slot.max_changes = 3;
  ChangeFeed feed(options);
  ASSERT_TRUE(feed.Drain().feed_up) << feed.off_reason();
  // Five one-row commits, then one of four rows (more than max_changes).
  std::vector<std::uint32_t> xids;
  for (int e = 1; e <= 5; ++e) {
    xids.push_back(static_cast<std::uint32_t>(Commit(
        "UPDATE seats SET version = version + 1 WHERE event_id = " + std::to_string(e) +
        " AND seat = 's1'")));
  }
  xids.push_back(static_cast<std::uint32_t>(
      Commit("UPDATE seats SET version = version + 1 WHERE event_id IN (6, 7) AND seat IN "
             "('s1', 's2')")));
  // upto_nchanges counts the function's rows, pgoutput messages (Begin and
  // Commit included): each one-row commit alone reaches 3, and the call ends
  // at the end of the transaction that reached it, never inside one.
  for (size_t i = 0; i < xids.size(); ++i) {
    ChangeBatch batch = feed.Drain();
    ASSERT_EQ(batch.transactions.size(), 1u) << "drain " << i;
    EXPECT_EQ(batch.transactions[0].xid, xids[i]) << "drain " << i;
  }
  EXPECT_EQ(feed.stats().decoded_total, 9u);  // the last one whole: 4 rows
  EXPECT_TRUE(feed.Drain().transactions.empty());
}

TEST_F(ChangeFeedTest, ATruncateIsUnmappableAndKeepsTheSlot) {
  ChangeFeed feed(Options("sw_truncate"));
  ASSERT_TRUE(feed.Drain().feed_up) << feed.off_reason();
  std::string slot = feed.slot_name();
  Commit("TRUNCATE tickets");
  ChangeBatch batch = feed.Drain();
  ASSERT_TRUE(batch.feed_up);
  EXPECT_NE(batch.unmappable.find("truncate"), std::string::npos) << batch.unmappable;
  EXPECT_EQ(batch.generation, 1u);
  EXPECT_EQ(feed.slot_name(), slot);
  EXPECT_EQ(feed.stats().resyncs_of(ResyncReason::kUnmappable), 1u);
  // Reported once: the next drain is clean.
  EXPECT_EQ(feed.Drain().unmappable, "");
}

// Drains that wait for a walsender still decoding a backlog are not dear:
// the wait is idle, and the walsender decodes each record once whatever the
// drains do. (On a cluster that commits asynchronously every drain may wait
// for the WAL writer; a database whose full pass takes milliseconds must not
// lose its slot over that.) What counts is the feed's own statements.
TEST_F(ChangeFeedTest, WaitingForTheWalsenderIsNoDearDrain) {
  ChangeFeedOptions options = Options("sw_cost");
  options.slot.statement_timeout = 60s;
  ChangeFeed feed(options);
  ASSERT_TRUE(feed.Drain().feed_up) << feed.off_reason();
  int old_pid = feed.backend_pid();
  feed.NoteFullPassCost(0.01);
  // A watched change, then three million rows of an unwatched table in one
  // transaction: the next drains wait their bound for the walsender, which
  // is still decoding them (seconds of a server core).
  Commit("UPDATE seats SET version = version + 1 WHERE event_id = 6");
  Commit("INSERT INTO filler SELECT g, 'padding' FROM generate_series(1, 3000000) g");
  ChangeBatch first = feed.Drain();
  EXPECT_TRUE(first.feed_up);
  EXPECT_EQ(KeysOf(first, "seats"), std::set<std::string>{"6"});
  double first_seconds = feed.stats().drain_duration_seconds;
  ChangeBatch second = feed.Drain();
  double second_seconds = feed.stats().drain_duration_seconds;
  std::cout << "drains waiting for the walsender: " << first_seconds << " s, " << second_seconds
            << " s\n";
  EXPECT_GT(first_seconds, DrainCostPolicy::kFloorSeconds);
  EXPECT_TRUE(second.feed_up);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(feed.Drain().feed_up);
  EXPECT_EQ(feed.stats().resyncs_of(ResyncReason::kDrainCost), 0u);
  EXPECT_EQ(feed.backend_pid(), old_pid);
  // A walsender still decoding notices its client gone only when it next
  // reads the socket: ended here, so that the next test can drop the
  // database its slot is in.
  feed.Abort();
  db_->Exec("SELECT pg_terminate_backend(" + std::to_string(old_pid) + ")");
  EXPECT_TRUE(WaitGone(old_pid));
}

TEST_F(ChangeFeedTest, VerdictOnAndWhatCannotBeMapped) {
  EXPECT_EQ(CheckFeed(IncrementalConfig(db_->changes_dsn())),
            "incremental mode: on\n  cannot map: a truncate of a watched table forces a full pass");
  // payments back to DEFAULT (its primary key, without event_id).
  db_->Exec("ALTER TABLE payments REPLICA IDENTITY DEFAULT");
  auto connection = db_->Connect();
  FeedVerdict verdict = InspectPublication(*connection, "seatwatch", BookingTables());
  EXPECT_TRUE(verdict.usable);
  EXPECT_EQ(verdict.unmappable,
            (std::vector<std::string>{
                "a truncate of a watched table forces a full pass",
                "deletes on public.payments under replica identity DEFAULT (without event_id) "
                "force a full pass",
                "updates on public.payments under replica identity DEFAULT (without event_id) "
                "force a full pass"}));
  // tickets back to DEFAULT: no primary key, no identity at all: the trap.
  db_->Exec("ALTER TABLE tickets REPLICA IDENTITY DEFAULT");
  verdict = InspectPublication(*connection, "seatwatch", BookingTables());
  ASSERT_EQ(verdict.warnings.size(), 1u);
  EXPECT_NE(verdict.warnings[0].find("public.tickets has no replica identity (DEFAULT)"),
            std::string::npos)
      << verdict.warnings[0];
}

TEST_F(ChangeFeedTest, OffWhenAWatchedTableIsNotPublished) {
  db_->Exec("ALTER PUBLICATION seatwatch DROP TABLE payments");
  EXPECT_EQ(CheckFeed(IncrementalConfig(db_->changes_dsn())),
            "incremental mode: off: table public.payments is not in publication seatwatch: its "
            "changes would never arrive");
  ChangeFeed feed(Options("sw_unpublished"));
  EXPECT_FALSE(feed.Drain().feed_up);
  EXPECT_NE(feed.off_reason().find("public.payments is not in publication"), std::string::npos);
  EXPECT_TRUE(Slots("sw_unpublished").empty());
}

TEST_F(ChangeFeedTest, OffWithoutTheReplicationAttribute) {
  db_->Exec("DO $$ BEGIN CREATE ROLE sw_norepl LOGIN; EXCEPTION WHEN duplicate_object THEN "
            "NULL; END $$");
  std::string dsn = db_->dsn();
  dsn.replace(dsn.find("user=postgres"), 13, "user=sw_norepl");
  EXPECT_EQ(CheckFeed(IncrementalConfig(dsn)),
            "incremental mode: off: role sw_norepl has no REPLICATION attribute (ALTER ROLE ... "
            "REPLICATION, or give [changes] dsn a role that has it)");
  ChangeFeedOptions options = Options("sw_norepl");
  options.slot.dsn = dsn;
  ChangeFeed feed(options);
  EXPECT_FALSE(feed.Drain().feed_up);
  EXPECT_NE(feed.off_reason().find("has no REPLICATION"), std::string::npos);
  EXPECT_NE(feed.RenderMetrics().find("\nseatwatch_changes_up 0\n"), std::string::npos);
}

// A cluster of its own: wal_level is a restart-only setting, and the shared
// one must stay logical.
TEST(ChangeFeedWalLevelTest, OffWithoutWalLevelLogical) {
  std::string dir = testing::MakeTempDir("sw-replica-pg");
  std::string script = testing::SourceDir() + "/scripts/pg-scratch";
  std::string output;
  int status = testing::RunCommand(
      "PG_SCRATCH_OPTS='-c wal_level=replica' " + script + " start " + dir, &output);
  struct Destroy {
    std::string command;
    ~Destroy() {
      std::string ignored;
      testing::RunCommand(command, &ignored);
    }
  } destroy{script + " destroy " + dir};
  ASSERT_EQ(status, 0) << output;
  std::string port = testing::ReadFile(dir + "/port");
  port.erase(std::remove(port.begin(), port.end(), '\n'), port.end());
  std::string dsn = "host=" + dir + "/sock port=" + port + " user=postgres dbname=postgres";
  EXPECT_EQ(CheckFeed(IncrementalConfig(dsn)),
            "incremental mode: off: wal_level is replica, not logical (a server restart with "
            "wal_level = logical is needed)");
  ChangeFeedOptions options;
  options.slot.dsn = dsn;
  options.slot.application_name = "seatwatch-test-changes";
  options.tables = BookingTables();
  ChangeFeed feed(options);
  EXPECT_FALSE(feed.Drain().feed_up);
  EXPECT_NE(feed.off_reason().find("wal_level is replica"), std::string::npos);
}

}  // namespace
}  // namespace seatwatch::changes
