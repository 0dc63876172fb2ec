// Incremental mode losing its slot, against the daemon: the slot's walsender
// terminated, a daemon frozen (its walsender ends at its timeout), and
// max_slot_wal_keep_size invalidating the slot of a daemon that is held
// back. Each gives one resync of its reason, one full pass (reason resync)
// of each check, and never a missed violation: one committed around the
// loss is reported. A huge unrelated transaction is no loss at all. And an
// unmappable change (a ticket delete under DEFAULT replica identity, whose
// old row has no event_id) forces a full pass that reports the violation it
// made.
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include <pqxx/nontransaction>

#include "support/daemon_process.h"
#include "support/incremental_daemon.h"
#include "support/scratch_db.h"
#include "support/test_env.h"

namespace seatwatch {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::AdminScalar;
using testing::IncrementalDaemon;
using testing::Sample;
using testing::ScratchDatabase;
using testing::SecondsSince;
using testing::ServerSetting;
using testing::WaitFor;

std::string Resyncs(const std::string& reason) {
  return "seatwatch_changes_resyncs_total{reason=\"" + reason + "\"}";
}
std::string Passes(const std::string& check, const std::string& reason) {
  return "seatwatch_full_passes_total{check=\"" + check + "\",reason=\"" + reason + "\"}";
}
std::string SoldWithoutTicket(int event_id) {
  return "seatwatch_invariant_violations{invariant=\"sold_seat_without_ticket\",event_id=\"" +
         std::to_string(event_id) + "\"}";
}
std::string SellTwo(int event_id) {
  return "UPDATE seats SET status = 'sold', holder = 'lost' WHERE event_id = " +
         std::to_string(event_id) + " AND seat IN ('V1', 'V2')";
}

const char* const kChecks[] = {"booking_reconciliation", "event_inventory"};

// The counters a resync moves, before and after.
struct Counters {
  explicit Counters(const std::string& text) {
    for (const char* reason : {"startup", "slot_lost", "error", "unmappable", "drain_cost"}) {
      resyncs[reason] = Sample(text, Resyncs(reason));
    }
    for (const char* check : kChecks) {
      for (const char* reason :
           {"startup", "backstop", "resync", "unmappable", "feed_down", "drain_cost"}) {
        passes[std::string(check) + "/" + reason] = Sample(text, Passes(check, reason));
      }
    }
  }
  std::map<std::string, double> resyncs;
  std::map<std::string, double> passes;
};

std::string Moves(const Counters& before, const Counters& after) {
  std::string out;
  for (const auto& [k, v] : after.resyncs) {
    if (v != before.resyncs.at(k)) out += " resyncs{" + k + "} " +
                                          std::to_string(v - before.resyncs.at(k));
  }
  for (const auto& [k, v] : after.passes) {
    if (v != before.passes.at(k)) out += " passes{" + k + "} " +
                                         std::to_string(v - before.passes.at(k));
  }
  return out.empty() ? " none" : out;
}

class IncrementalResyncTest : public ::testing::Test {
 protected:
  void Open(const std::string& name, bool setup = true) {
    db_ = std::make_unique<ScratchDatabase>(name);
    testing::SeedBookingSeats(*db_, 1, 1);
    if (setup) testing::RunChangesSetup(*db_);
  }

  // Waits until the loss is answered: `reason` resynced once, one full pass
  // (resync) per check, incremental again; then checks nothing moved more.
  void ExpectOneResync(IncrementalDaemon& daemon, const Counters& before,
                       const std::string& reason, const std::string& pass_reason = "resync") {
    std::string text;
    bool answered = WaitFor([&] {
      text = daemon.Metrics();
      Counters now(text);
      bool passes = true;
      for (const char* check : kChecks) {
        std::string k = std::string(check) + "/" + pass_reason;
        passes = passes && now.passes.at(k) >= before.passes.at(k) + 1;
      }
      return now.resyncs.at(reason) >= before.resyncs.at(reason) + 1 && passes &&
             daemon.Incremental(text);
    }, 30s);
    EXPECT_TRUE(answered) << "moved:" << Moves(before, Counters(text)) << "\n" << text;
    std::this_thread::sleep_for(2s);  // nothing more follows
    Counters after(daemon.Metrics());
    std::cerr << "after the loss, moved:" << Moves(before, after) << "\n";
    EXPECT_EQ(after.resyncs.at(reason), before.resyncs.at(reason) + 1) << reason;
    for (const char* check : kChecks) {
      std::string k = std::string(check) + "/" + pass_reason;
      EXPECT_EQ(after.passes.at(k), before.passes.at(k) + 1) << k;
    }
  }

  // Waits for the violation `series` = `count`; returns the seconds it took.
  double ExpectReported(IncrementalDaemon& daemon, const std::string& series, double count,
                        Clock::time_point since) {
    std::string text;
    bool reported = WaitFor([&] {
      text = daemon.Metrics();
      return Sample(text, series) == count;
    }, 30s);
    double latency = SecondsSince(since);
    EXPECT_TRUE(reported) << "MISSED: " << series << "\n" << text;
    return latency;
  }

  std::unique_ptr<ScratchDatabase> db_;
};

TEST_F(IncrementalResyncTest, TerminatedSlotBackendResyncsAndMissesNothing) {
  Open("sw_incr_resync_kill");
  IncrementalDaemon daemon(*db_);
  ASSERT_TRUE(daemon.WaitIncremental(60s)) << daemon.Metrics() << daemon.process().Log();
  int pid = daemon.ChangesBackendPid();
  ASSERT_GT(pid, 0);
  Counters before(daemon.Metrics());
  ASSERT_EQ(AdminScalar("SELECT pg_terminate_backend(" + std::to_string(pid) + ")"), "t");
  // Committed while the slot is gone, before a new one exists.
  db_->Exec(SellTwo(4));
  auto committed = Clock::now();
  double latency = ExpectReported(daemon, SoldWithoutTicket(4), 2, committed);
  std::cerr << "terminated slot backend: violation reported " << latency << " s after commit\n";
  ExpectOneResync(daemon, before, "slot_lost");
  EXPECT_NE(daemon.ChangesBackendPid(), pid);
  EXPECT_GT(daemon.ChangesBackendPid(), 0);
  EXPECT_EQ(daemon.Value(SoldWithoutTicket(4)), 2);
}

// The walsender decodes a huge unrelated transaction once, with no
// statement of the feed waiting for it: statement_timeout, however short,
// does not end the slot, and the violation after it is reported.
TEST_F(IncrementalResyncTest, AHugeUnrelatedTransactionKeepsTheSlotAndMissesNothing) {
  Open("sw_incr_resync_timeout");
  db_->Exec("CREATE TABLE filler (id int, pad text)");  // in no publication
  IncrementalDaemon daemon(*db_,
                           "enabled = true\ninterval = \"1s\"\nstatement_timeout = \"300ms\"\n");
  ASSERT_TRUE(daemon.WaitIncremental(60s)) << daemon.Metrics() << daemon.process().Log();
  int pid = daemon.ChangesBackendPid();
  Counters before(daemon.Metrics());
  auto start = Clock::now();
  db_->Exec("INSERT INTO filler SELECT g, 'x' FROM generate_series(1, 1000000) g");
  std::cerr << "1000000-row transaction committed in " << SecondsSince(start) << " s\n";
  db_->Exec(SellTwo(6));
  auto committed = Clock::now();
  double latency = ExpectReported(daemon, SoldWithoutTicket(6), 2, committed);
  std::cerr << "after a million unrelated rows: violation reported " << latency
            << " s after commit\n";
  // Not lost, no error. The drains that wait for the walsender meanwhile
  // may cost more than this small database's full passes: then the drain
  // cost policy starts a new slot past the backlog, as it should.
  Counters after(daemon.Metrics());
  for (const char* reason : {"slot_lost", "error"}) {
    EXPECT_EQ(after.resyncs.at(reason), before.resyncs.at(reason)) << reason;
  }
  if (after.resyncs.at("drain_cost") == before.resyncs.at("drain_cost")) {
    EXPECT_EQ(daemon.ChangesBackendPid(), pid);
  }
}

// SIGCONT for a daemon a test stopped, whatever happens.
struct Resume {
  explicit Resume(testing::DaemonProcess& process) : process(process) {}
  ~Resume() { process.Signal(SIGCONT); }
  testing::DaemonProcess& process;
};

// A frozen daemon (SIGSTOP: as a partitioned one, it says nothing) keeps no
// WAL past its walsender's timeout: statement_timeout 1 s gives a
// wal_sender_timeout of 5 s, and the slot goes with the walsender within
// that and one interval, under a write load, whatever the server's default
// (60 s). Resumed, the daemon makes a new slot and reports the violation
// committed while it was frozen.
TEST_F(IncrementalResyncTest, AFrozenDaemonKeepsNoWalPastItsWalsendersTimeout) {
  Open("sw_incr_resync_frozen");
  db_->Exec("CREATE TABLE filler (id int, pad text)");
  IncrementalDaemon daemon(*db_, "enabled = true\ninterval = \"200ms\"\n"
                                 "statement_timeout = \"1s\"\n");
  ASSERT_TRUE(daemon.WaitIncremental(60s)) << daemon.Metrics() << daemon.process().Log();
  int pid = daemon.ChangesBackendPid();
  ASSERT_GT(pid, 0);
  std::string slot = daemon.ChangesSlot();
  ASSERT_FALSE(slot.empty());
  Counters before(daemon.Metrics());
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    auto connection = db_->Connect();
    while (!stop) {
      pqxx::nontransaction tx(*connection);
      tx.exec("INSERT INTO filler SELECT g, repeat('w', 200) FROM generate_series(1, 200) g");
      std::this_thread::sleep_for(10ms);
    }
  });
  struct Join {
    ~Join() {
      stop = true;
      thread.join();
    }
    std::atomic<bool>& stop;
    std::thread& thread;
  } join{stop, writer};
  double gone_after = -1;
  long long most_retained = 0;
  Clock::time_point resumed;
  {
    daemon.process().Signal(SIGSTOP);
    Resume resume(daemon.process());
    auto frozen = Clock::now();
    db_->Exec(SellTwo(5));
    while (SecondsSince(frozen) < 60) {
      std::string retained = AdminScalar(
          "SELECT (pg_current_wal_lsn() - restart_lsn)::bigint FROM pg_replication_slots WHERE "
          "slot_name = '" + slot + "'");
      if (retained.empty()) {
        gone_after = SecondsSince(frozen);
        break;
      }
      most_retained = std::max(most_retained, std::stoll(retained));
      std::this_thread::sleep_for(100ms);
    }
    ASSERT_GE(gone_after, 0) << "the frozen daemon's slot " << slot << " outlived 60 s";
    // What it held meanwhile is what the load wrote in that time.
    std::cerr << "frozen daemon: slot " << slot << " gone " << gone_after
              << " s after SIGSTOP; it held at most " << most_retained << " bytes of WAL\n";
    // The walsender's timeout, one interval, and the server's timer slack.
    EXPECT_LE(gone_after, 5.0 + 0.2 + 1.5);
    EXPECT_GE(gone_after, 3.0);  // the timeout ended it, nothing sooner
    EXPECT_EQ(AdminScalar("SELECT count(*) FROM pg_stat_activity WHERE pid = " +
                          std::to_string(pid)),
              "0");
    daemon.process().Signal(SIGCONT);
    resumed = Clock::now();
  }
  double latency = ExpectReported(daemon, SoldWithoutTicket(5), 2, resumed);
  std::cerr << "frozen daemon: violation reported " << latency << " s after it resumed\n";
  ExpectOneResync(daemon, before, "slot_lost");
  EXPECT_NE(daemon.ChangesBackendPid(), pid);
}

TEST_F(IncrementalResyncTest, SlotInvalidatedByMaxSlotWalKeepSizeResyncsAndMissesNothing) {
  Open("sw_incr_resync_invalidated");
  db_->Exec("CREATE TABLE filler (id int, pad text)");
  IncrementalDaemon daemon(*db_);
  ASSERT_TRUE(daemon.WaitIncremental(60s)) << daemon.Metrics() << daemon.process().Log();
  int pid = daemon.ChangesBackendPid();
  ASSERT_GT(pid, 0);
  std::string slot = daemon.ChangesSlot();
  ASSERT_FALSE(slot.empty());
  Counters before(daemon.Metrics());
  ServerSetting keep("max_slot_wal_keep_size", "'1MB'");
  {
    // The daemon held back: its slot stops advancing.
    daemon.process().Signal(SIGSTOP);
    Resume resume(daemon.process());
    // A violation in WAL the held-back slot has not decoded yet...
    db_->Exec(SellTwo(7));
    auto committed = Clock::now();
    // ...then the WAL moves on and a checkpoint invalidates the slot,
    // terminating its backend.
    for (int i = 0; i < 3; ++i) {
      db_->Exec("INSERT INTO filler SELECT g, 'y' FROM generate_series(1, 2000) g");
      AdminScalar("SELECT pg_switch_wal()");
    }
    AdminScalar("CHECKPOINT");
    bool gone = WaitFor([&] {
      return AdminScalar("SELECT count(*) FROM pg_stat_activity WHERE pid = " +
                         std::to_string(pid)) == "0";
    }, 20s);
    ASSERT_TRUE(gone) << "the checkpoint did not invalidate slot " << slot << ": "
                      << AdminScalar("SELECT wal_status FROM pg_replication_slots WHERE "
                                     "slot_name = '" + slot + "'");
    std::cerr << "slot " << slot << " invalidated, backend " << pid << " terminated "
              << SecondsSince(committed) << " s after the violation\n";
    EXPECT_EQ(AdminScalar("SELECT count(*) FROM pg_replication_slots WHERE slot_name = '" +
                          slot + "'"),
              "0");
    daemon.process().Signal(SIGCONT);
    auto resumed = Clock::now();
    double latency = ExpectReported(daemon, SoldWithoutTicket(7), 2, resumed);
    std::cerr << "max_slot_wal_keep_size: violation reported " << latency
              << " s after the daemon resumed\n";
  }
  keep.Reset();
  ExpectOneResync(daemon, before, "slot_lost");
  EXPECT_NE(daemon.ChangesBackendPid(), pid);
}

TEST_F(IncrementalResyncTest, TicketDeleteUnderDefaultReplicaIdentityForcesAFullPass) {
  Open("sw_incr_unmappable", /*setup=*/false);
  // A booking database set up by hand: tickets keeps DEFAULT replica
  // identity, given a surrogate primary key so that its UPDATE and DELETE
  // still work in the publication, but its old rows carry only that key,
  // never event_id; payments as the setup script makes it. The
  // application's statements (INSERT INTO tickets (event_id, seat, fan))
  // are unchanged.
  db_->Exec("ALTER TABLE tickets ADD COLUMN id bigserial PRIMARY KEY");
  db_->Exec("CREATE UNIQUE INDEX payments_idempotency_key_event_id_idx "
            "ON payments (idempotency_key, event_id)");
  db_->Exec("ALTER TABLE payments REPLICA IDENTITY USING INDEX "
            "payments_idempotency_key_event_id_idx");
  db_->Exec("CREATE PUBLICATION seatwatch FOR TABLE seats (event_id, seat), "
            "tickets (event_id, seat, id), payments (idempotency_key, event_id) "
            "WITH (publish = 'insert, update, delete, truncate')");
  ASSERT_EQ(db_->Scalar("SELECT relreplident FROM pg_class WHERE relname = 'tickets'"), "d");
  // A correct sale whose ticket will be deleted.
  db_->Exec("BEGIN; UPDATE seats SET status = 'sold', holder = 'fan-d' "
            "WHERE event_id = 6 AND seat = 'V5'; "
            "INSERT INTO tickets (event_id, seat, fan) VALUES (6, 'V5', 'fan-d'); "
            "INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents, status) "
            "VALUES ('d1', 6, 'V5', 'fan-d', 100, 'confirmed'); COMMIT");
  IncrementalDaemon daemon(*db_);
  ASSERT_TRUE(daemon.WaitIncremental(60s)) << daemon.Metrics() << daemon.process().Log();
  ASSERT_TRUE(testing::AllInvariantsOk(daemon.Metrics()));

  std::string output;
  testing::RunCommand("SEATWATCH_DSN='" + db_->dsn() + "' SEATWATCH_CHANGES_DSN='" +
                          db_->changes_dsn() + "' " + testing::SeatwatchBinary() +
                          " --check-config --config " + daemon.config_path() + " 2>&1",
                      &output);
  std::cerr << "--check-config:\n" << output;
  EXPECT_NE(output.find("cannot map: deletes on public.tickets"), std::string::npos) << output;

  Counters before(daemon.Metrics());
  db_->Exec("DELETE FROM tickets WHERE event_id = 6 AND seat = 'V5'");
  auto committed = Clock::now();
  double latency = ExpectReported(daemon, SoldWithoutTicket(6), 1, committed);
  EXPECT_EQ(daemon.Value("seatwatch_invariant_violations{invariant="
                         "\"confirmed_payment_without_ticket\",event_id=\"6\"}"),
            1);
  std::cerr << "unmappable ticket delete: violation reported " << latency << " s after commit\n";
  std::string text;
  bool passed = WaitFor([&] {
    text = daemon.Metrics();
    Counters now(text);
    return now.passes.at("booking_reconciliation/unmappable") ==
               before.passes.at("booking_reconciliation/unmappable") + 1 &&
           now.passes.at("event_inventory/unmappable") ==
               before.passes.at("event_inventory/unmappable") + 1;
  }, 20s);
  EXPECT_TRUE(passed) << "moved:" << Moves(before, Counters(text)) << "\n" << text;
  EXPECT_TRUE(daemon.WaitIncremental(20s)) << daemon.Metrics();
  std::this_thread::sleep_for(2s);
  Counters after(daemon.Metrics());
  std::cerr << "after the unmappable delete, moved:" << Moves(before, after) << "\n";
  EXPECT_EQ(after.passes.at("booking_reconciliation/unmappable"),
            before.passes.at("booking_reconciliation/unmappable") + 1);
  // The application's own writes still work on this setup.
  db_->Exec("INSERT INTO tickets (event_id, seat, fan) VALUES (6, 'V5', 'fan-d')");
  EXPECT_TRUE(WaitFor([&] { return testing::AllInvariantsOk(daemon.Metrics()); }, 15s))
      << daemon.Metrics();
}

}  // namespace
}  // namespace seatwatch
