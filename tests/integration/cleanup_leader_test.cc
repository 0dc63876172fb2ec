// Two daemons with cleanup on against one database: exactly one is the
// cleanup leader; when it stops, the other takes over within one interval;
// when the leader's connection is killed, leadership is lost with it and
// taken again.
#include <gtest/gtest.h>

#include <signal.h>

#include <cmath>
#include <iostream>
#include <thread>

#include "support/daemon_process.h"
#include "support/daemon_test.h"
#include "support/scratch_db.h"
#include "support/test_env.h"

namespace seatwatch {
namespace {

using namespace std::chrono_literals;
using testing::DaemonProcess;
using testing::Sample;
using testing::ScratchDatabase;
using testing::WaitFor;

constexpr double kIntervalSeconds = 2;
// The other instance tries at its next run, at most one interval away; the
// slack covers the scrape loop (100ms), the run itself and a loaded machine.
constexpr double kTakeoverSlackSeconds = 1.5;

struct Instance {
  std::string name;
  int port;
  std::unique_ptr<DaemonProcess> process;

  double Leader() const {
    return testing::ScrapeSample(port, "seatwatch_cleanup_leader");
  }
  double Freed() const {
    return testing::ScrapeSample(port, "seatwatch_cleanup_freed_total");
  }
};

Instance Start(const ScratchDatabase& db, const std::string& name) {
  std::string dir = testing::MakeTempDir("seatwatch-leader");
  int port = testing::FreePort();
  std::string queries = testing::SourceDir() + "/queries/booking/";
  std::string path = dir + "/seatwatch.toml";
  testing::WriteFile(path, "[database]\ndsn = \"" + db.dsn() + "\"\napplication_name = \"" + name +
                               "\"\n[http]\nlisten = \"127.0.0.1:" + std::to_string(port) +
                               "\"\n[poll]\ninterval = \"1s\"\n[locks]\nenabled = false\n"
                               "[cleanup]\nenabled = true\ninterval = \"2s\"\nbatch_size = 50\n"
                               "sql = \"" +
                               queries + "cleanup_expired_holds.sql\"\n");
  return Instance{name, port,
                  std::make_unique<DaemonProcess>(std::vector<std::string>{"--config", path})};
}

// The backend holding the cleanup leader lock, as "application_name pid".
std::string LockHolder(const ScratchDatabase& db) {
  return db.Scalar(
      "SELECT string_agg(a.application_name || ' ' || a.pid, ',') FROM pg_locks l "
      "JOIN pg_stat_activity a ON a.pid = l.pid "
      "WHERE l.locktype = 'advisory' AND l.granted AND l.classid = 1936023924 "
      "AND l.objid = 2002875491 AND l.objsubid = 1 "
      "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())");
}

void AddExpiredHold(const ScratchDatabase& db, const std::string& seat) {
  db.Exec("INSERT INTO seats (event_id, seat, status, holder, hold_expires_at) VALUES (1, '" +
          seat + "', 'held', 'fan', now() - interval '1 minute')");
}

TEST(CleanupLeaderTest, ExactlyOneLeadsAndTheOtherTakesOverWithinAnInterval) {
  ScratchDatabase db("sw_cleanup_leader");
  Instance a = Start(db, "sw-a");
  Instance b = Start(db, "sw-b");
  ASSERT_TRUE(WaitFor([&] { return a.Leader() + b.Leader() == 1; }, 20s))
      << a.process->Log() << b.process->Log();
  // Stays exactly one over several intervals: the standby's retries fail.
  for (int i = 0; i < 10; ++i) {
    double la = a.Leader();
    double lb = b.Leader();
    ASSERT_FALSE(std::isnan(la) || std::isnan(lb));
    ASSERT_EQ(la + lb, 1) << "a=" << la << " b=" << lb;
    std::this_thread::sleep_for(500ms);
  }
  Instance& leader = a.Leader() == 1 ? a : b;
  Instance& standby = a.Leader() == 1 ? b : a;
  // The lock is held by the leader's own cleanup connection, not its poller.
  std::string holder = LockHolder(db);
  EXPECT_EQ(holder.substr(0, holder.find(' ')), leader.name + "-cleanup") << holder;
  EXPECT_NE(standby.process->Log().find("another instance holds the cleanup leader lock"),
            std::string::npos);

  // Only the leader frees holds.
  AddExpiredHold(db, "A1");
  ASSERT_TRUE(WaitFor([&] { return leader.Freed() == 1; }, 10s)) << leader.process->Log();
  EXPECT_EQ(standby.Freed(), 0);

  // Stop the leader (SIGTERM): it releases the lock on its way out; the
  // standby takes it at its next try. Timed from the signal, so the time the
  // leader needs to shut down counts against the bound too.
  auto signalled = std::chrono::steady_clock::now();
  leader.process->Signal(SIGTERM);
  ASSERT_TRUE(WaitFor([&] { return standby.Leader() == 1; }, 10s)) << standby.process->Log();
  double takeover =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - signalled).count();
  std::cout << "takeover after " << takeover << "s (interval " << kIntervalSeconds << "s)\n";
  EXPECT_LE(takeover, kIntervalSeconds + kTakeoverSlackSeconds);
  EXPECT_EQ(leader.process->Stop(), 0) << leader.process->Log();
  holder = LockHolder(db);
  EXPECT_EQ(holder.substr(0, holder.find(' ')), standby.name + "-cleanup") << holder;
  AddExpiredHold(db, "A2");
  ASSERT_TRUE(WaitFor([&] { return standby.Freed() == 1; }, 10s)) << standby.process->Log();

  // Kill the new leader's cleanup connection: the server drops the lock with
  // the backend, the instance notices at its next run, reconnects and, being
  // alone now, takes the lock again on its new backend.
  std::string old_pid = holder.substr(holder.find(' ') + 1);
  db.Exec("SELECT pg_terminate_backend(" + old_pid + ")");
  ASSERT_TRUE(WaitFor(
      [&] {
        std::string now_holder = LockHolder(db);
        return !now_holder.empty() && now_holder != holder;
      },
      20s))
      << standby.process->Log();
  holder = LockHolder(db);
  EXPECT_EQ(holder.substr(0, holder.find(' ')), standby.name + "-cleanup") << holder;
  EXPECT_NE(holder.substr(holder.find(' ') + 1), old_pid);
  ASSERT_TRUE(WaitFor([&] { return standby.Leader() == 1; }, 10s));
  std::string log = standby.process->Log();
  EXPECT_NE(log.find("no longer the cleanup leader"), std::string::npos) << log;
  AddExpiredHold(db, "A3");
  ASSERT_TRUE(WaitFor([&] { return standby.Freed() == 2; }, 15s)) << standby.process->Log();
  EXPECT_EQ(standby.process->Stop(), 0) << standby.process->Log();
  EXPECT_EQ(LockHolder(db), "");
}

}  // namespace
}  // namespace seatwatch
