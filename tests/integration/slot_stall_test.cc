// A slot session whose path stalls while the server stays reachable (a
// proxy that holds one connection open and forwards new ones): the feed
// gives the session up, and before it makes the next slot it ends the old
// backend on the server, so that the old temporary slot does not hold WAL
// until TCP keepalive gives up. At no time are there two slots of the feed.
#include "changes/change_feed.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <thread>

#include <pqxx/connection>
#include <pqxx/nontransaction>
#include <pqxx/result>

#include "support/change_feed_fixtures.h"
#include "support/incremental_daemon.h"
#include "support/scratch_db.h"
#include "support/stall_proxy.h"
#include "support/test_env.h"

namespace seatwatch::changes {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr const char* kDb = "sw_slot_stall";
constexpr const char* kPrefix = "sw_stalled";

int SlotCount(pqxx::connection& connection) {
  pqxx::nontransaction tx(connection);
  return tx.exec_params1("SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE $1",
                         std::string(kPrefix) + "\\_%")[0]
      .as<int>();
}

bool BackendExists(int pid) {
  pqxx::connection connection(testing::ScratchDsn("postgres"));
  pqxx::nontransaction tx(connection);
  return tx.exec_params1("SELECT count(*) FROM pg_stat_activity WHERE pid = $1", pid)[0]
             .as<int>() > 0;
}

// Counts the feed's slots every 20 ms on a thread of its own; the most seen.
class SlotWatcher {
 public:
  SlotWatcher() : thread_([this] { Run(); }) {}
  ~SlotWatcher() { Stop(); }
  int Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    return most_;
  }

 private:
  void Run() {
    pqxx::connection connection(testing::ScratchDsn("postgres"));
    while (!stop_) {
      most_ = std::max(most_.load(), SlotCount(connection));
      std::this_thread::sleep_for(20ms);
    }
  }
  std::atomic<bool> stop_{false};
  std::atomic<int> most_{0};
  std::thread thread_;
};

TEST(SlotStallTest, AGivenUpSlotSessionIsEndedOnTheServerBeforeTheNextSlot) {
  testing::ScratchDatabase db(kDb);
  testing::RunChangesSetup(db);
  testing::ScratchChangesDsn("postgres");  // the changes role exists
  testing::StallProxy proxy(testing::ScratchTcpPort());
  ChangeFeedOptions options;
  options.slot.dsn = "host=127.0.0.1 port=" + std::to_string(proxy.port()) + " user=" +
                     testing::kChangesRole + " dbname=" + kDb;
  options.slot.application_name = "seatwatch-test-changes";
  options.slot.statement_timeout = 1s;
  options.slot.connect_timeout = 1s;
  options.slot.create_timeout = 2s;
  options.slot.reconnect_max_backoff = 1s;
  options.slot.slot_prefix = kPrefix;
  options.tables = testing::BookingTables();
  ChangeFeed feed(options);
  ASSERT_TRUE(feed.Drain().feed_up) << feed.off_reason();
  SlotWatcher watcher;
  for (int stall = 1; stall <= 2; ++stall) {
    int old_pid = feed.backend_pid();
    std::string old_slot = feed.slot_name();
    // The slot session's path stops; the server and new connections do not.
    proxy.HoldOpen();
    auto start = Clock::now();
    ChangeBatch batch = feed.Drain();
    for (auto deadline = Clock::now() + 20s; !batch.feed_up && Clock::now() < deadline;) {
      std::this_thread::sleep_for(200ms);
      batch = feed.Drain();
    }
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    ASSERT_TRUE(batch.feed_up) << "stall " << stall << ": " << feed.off_reason();
    EXPECT_EQ(batch.generation, static_cast<std::uint64_t>(stall + 1));
    EXPECT_NE(feed.slot_name(), old_slot);
    // The old backend was ended before the new slot was made.
    EXPECT_FALSE(BackendExists(old_pid)) << "stall " << stall << ": backend " << old_pid;
    std::cerr << "stall " << stall << ": new slot " << seconds << " s after the stall\n";
  }
  EXPECT_LE(watcher.Stop(), 1);
  std::string text = feed.RenderMetrics();
  EXPECT_NE(text.find("\nseatwatch_changes_orphan_slots 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nseatwatch_changes_resyncs_total{reason=\"slot_lost\"} 2\n"),
            std::string::npos)
      << text;
}

// The feed makes only temporary slots, which are never inactive: an
// inactive slot named like its own is a leftover holding WAL, dropped before
// the feed makes its slot. Another prefix's slot is left alone.
TEST(SlotStallTest, AnInactiveSlotOfThePrefixIsDroppedBeforeTheNextSlot) {
  testing::ScratchDatabase db("sw_slot_leftover");
  testing::RunChangesSetup(db);
  db.Exec("SELECT pg_create_logical_replication_slot('sw_leftover_999_1', 'pgoutput')");
  db.Exec("SELECT pg_create_logical_replication_slot('sw_other_999_1', 'pgoutput')");
  struct DropOther {
    ~DropOther() {
      pqxx::connection admin(testing::ScratchDsn("postgres"));
      pqxx::nontransaction(admin).exec(
          "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
          "WHERE slot_name IN ('sw_other_999_1', 'sw_leftover_999_1')");
    }
  } drop_other;
  ChangeFeedOptions options;
  options.slot.dsn = db.changes_dsn();
  options.slot.application_name = "seatwatch-test-changes";
  options.slot.slot_prefix = "sw_leftover";
  options.tables = testing::BookingTables();
  ChangeFeed feed(options);
  ASSERT_TRUE(feed.Drain().feed_up) << feed.off_reason();
  pqxx::connection admin(testing::ScratchDsn("postgres"));
  pqxx::nontransaction tx(admin);
  std::string slots;
  for (const auto& row : tx.exec("SELECT slot_name FROM pg_replication_slots WHERE slot_name "
                                 "LIKE 'sw\\_%' ORDER BY 1")) {
    slots += std::string(row[0].c_str()) + " ";
  }
  EXPECT_EQ(slots, feed.slot_name() + " sw_other_999_1 ");
  EXPECT_NE(feed.RenderMetrics().find("\nseatwatch_changes_orphan_slots 0\n"), std::string::npos);
}

}  // namespace
}  // namespace seatwatch::changes
