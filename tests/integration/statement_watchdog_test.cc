// StatementWatchdog through a path that stops answering (a stalled proxy
// that also holds every new connection, so a cancel request never returns):
// each give-up still drops its connection at once, and the watchdog keeps at
// most one cancel thread outstanding however often it gives up.
#include <gtest/gtest.h>

#include <dirent.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <pqxx/connection>
#include <pqxx/except>
#include <pqxx/nontransaction>

#include "db/statement_watchdog.h"
#include "support/scratch_db.h"
#include "support/stall_proxy.h"

namespace seatwatch::db {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

int ThreadCount() {
  int count = 0;
  DIR* dir = opendir("/proc/self/task");
  if (!dir) return -1;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(dir);
  return count;
}

TEST(StatementWatchdogTest, RepeatedStallsKeepAtMostOneCancelThread) {
  testing::ScratchDatabase db("sw_watchdog_stall", testing::ScratchDatabase::Schema::kNone);
  testing::StallProxy proxy(testing::ScratchTcpPort());
  constexpr int kStalls = 4;
  std::vector<std::shared_ptr<pqxx::connection>> connections;
  for (int i = 0; i < kStalls; ++i) {
    connections.push_back(std::make_shared<pqxx::connection>(
        "host=127.0.0.1 port=" + std::to_string(proxy.port()) + " user=postgres dbname=" +
        db.name()));
  }
  StatementWatchdog watchdog("test");
  int before = ThreadCount();
  proxy.Stall();
  for (int i = 0; i < kStalls; ++i) {
    auto start = Clock::now();
    watchdog.Arm(connections[i], 300ms, 10s);
    bool threw = false;
    try {
      pqxx::nontransaction tx(*connections[i]);
      tx.exec("SELECT 1");
    } catch (const std::exception&) {
      threw = true;
    }
    EXPECT_TRUE(watchdog.Disarm()) << "stall " << i;
    EXPECT_TRUE(threw) << "stall " << i;
    // Given up after the silence and dropped after the grace, not stuck.
    EXPECT_LT(Clock::now() - start, 5s) << "stall " << i;
  }
  int after = ThreadCount();
  std::cerr << "threads before the stalls " << before << ", after " << kStalls << " give-ups "
            << after << "\n";
  // The first give-up's cancel is stuck in the stalled path; the others were
  // not started.
  EXPECT_LE(after - before, 1);
  proxy.Resume();
  // Once the path answers, the cancel returns and its thread ends.
  auto deadline = Clock::now() + 10s;
  while (ThreadCount() > before && Clock::now() < deadline) std::this_thread::sleep_for(50ms);
  EXPECT_EQ(ThreadCount(), before);
}

}  // namespace
}  // namespace seatwatch::db
