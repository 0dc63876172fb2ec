// systemd integration: the lanes' heartbeats and first publishes, the
// notification datagrams (read back from a real unix datagram socket set as
// NOTIFY_SOCKET) and the watchdog pinger's withholding of pings while a lane
// is stalled.
#include <gtest/gtest.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>

#include "poll/lane_progress.h"
#include "service/notifier.h"
#include "service/service_manager.h"
#include "service/watchdog_pinger.h"
#include "support/test_config.h"

namespace seatwatch::service {
namespace {

using namespace std::chrono_literals;

// A NOTIFY_SOCKET for the test's process; restores the environment after.
class NotifySocket {
 public:
  NotifySocket() {
    dir_ = std::filesystem::temp_directory_path() /
           ("seatwatch-notify-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "notify").string();
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path_.c_str(), sizeof(address.sun_path) - 1);
    std::filesystem::remove(path_);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    setenv("NOTIFY_SOCKET", path_.c_str(), 1);
  }
  ~NotifySocket() {
    unsetenv("NOTIFY_SOCKET");
    unsetenv("WATCHDOG_USEC");
    unsetenv("WATCHDOG_PID");
    close(fd_);
    std::filesystem::remove_all(dir_);
  }
  // The next datagram; empty if none comes within a minute (a failure, not
  // a measurement: every test waits for something that must arrive).
  std::string Next() {
    pollfd entry{fd_, POLLIN, 0};
    if (::poll(&entry, 1, 60000) != 1) return "";
    char buffer[4096];
    ssize_t n = recv(fd_, buffer, sizeof buffer, 0);
    return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : "";
  }

 private:
  std::filesystem::path dir_;
  std::string path_;
  int fd_ = -1;
};

TEST(LaneProgressTest, FindsTheFirstLaneWhoseStampIsTooOld) {
  poll::LaneProgress progress({"checks", "locks"});
  auto now = poll::LaneProgress::Clock::now();
  EXPECT_FALSE(progress.FindStall(1h, now).has_value());
  auto stall = progress.FindStall(1h, now + 2h);
  ASSERT_TRUE(stall.has_value());
  EXPECT_EQ(stall->lane, "checks");
  EXPECT_GT(stall->age, 1h);
  // A stamp moves the lane's heartbeat to now.
  progress.Stamp(0);
  progress.Stamp(1);
  EXPECT_FALSE(progress.FindStall(1h, poll::LaneProgress::Clock::now()).has_value());
}

TEST(LaneProgressTest, CallsBackOnceWhenEveryLaneHasPublished) {
  poll::LaneProgress progress({"checks", "locks"});
  int calls = 0;
  progress.OnAllPublished([&calls] { ++calls; });
  progress.MarkPublished(1);
  progress.MarkPublished(1);
  EXPECT_EQ(calls, 0);
  EXPECT_FALSE(progress.all_published());
  progress.MarkPublished(0);
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(progress.all_published());
  progress.MarkPublished(0);
  EXPECT_EQ(calls, 1);
}

TEST(LaneProgressTest, StampPeriodIsWhatWasSet) {
  poll::LaneProgress progress({"checks"});
  EXPECT_EQ(progress.stamp_period(), std::chrono::hours(1));
  progress.SetStampPeriod(15s);
  EXPECT_EQ(progress.stamp_period(), 15s);
}

TEST(NotifierTest, StatusLineKeepsToOneAssignment) {
  EXPECT_EQ(StatusLine("a\nREADY=1"), "STATUS=a READY=1");
}

TEST(NotifierTest, DoesNothingWithoutNotifySocket) {
  unsetenv("NOTIFY_SOCKET");
  setenv("WATCHDOG_USEC", "1000000", 1);
  Notifier notifier;
  EXPECT_FALSE(notifier.active());
  EXPECT_FALSE(notifier.watchdog_interval().has_value());
  EXPECT_TRUE(notifier.Ready("x"));
  unsetenv("WATCHDOG_USEC");
}

TEST(NotifierTest, SendsDatagramsToNotifySocket) {
  NotifySocket socket;
  setenv("WATCHDOG_USEC", "4000000", 1);
  setenv("WATCHDOG_PID", std::to_string(getpid()).c_str(), 1);
  Notifier notifier;
  EXPECT_TRUE(notifier.active());
  ASSERT_TRUE(notifier.watchdog_interval().has_value());
  EXPECT_EQ(*notifier.watchdog_interval(), 4s);
  EXPECT_TRUE(notifier.Ready("polling"));
  EXPECT_EQ(socket.Next(), "READY=1\nSTATUS=polling");
  EXPECT_TRUE(notifier.Watchdog());
  EXPECT_EQ(socket.Next(), "WATCHDOG=1");
  EXPECT_TRUE(notifier.Reloading("reloading"));
  std::string reloading = socket.Next();
  EXPECT_EQ(reloading.rfind("RELOADING=1\nMONOTONIC_USEC=", 0), 0u) << reloading;
  EXPECT_NE(reloading.find("\nSTATUS=reloading"), std::string::npos) << reloading;
  EXPECT_TRUE(notifier.Stopping());
  EXPECT_EQ(socket.Next(), "STOPPING=1\nSTATUS=stopping");
}

TEST(NotifierTest, WatchdogOfAnotherProcessIsNotOurs) {
  NotifySocket socket;
  setenv("WATCHDOG_USEC", "4000000", 1);
  setenv("WATCHDOG_PID", std::to_string(getpid() + 1).c_str(), 1);
  Notifier notifier;
  EXPECT_TRUE(notifier.active());
  EXPECT_FALSE(notifier.watchdog_interval().has_value());
}

TEST(WatchdogPingerTest, WithholdsPingsWhileALaneIsStalled) {
  NotifySocket socket;
  Notifier notifier;
  std::atomic<bool> stalled{false};
  std::atomic<int> stalled_ticks{0};
  WatchdogPinger pinger(notifier, 200ms, [&](WatchdogPinger::Clock::duration) {
    std::optional<WatchdogPinger::Stall> out;
    if (stalled) {
      ++stalled_ticks;
      out = WatchdogPinger::Stall{"checks", 7s};
    }
    return out;
  });
  pinger.Start();
  EXPECT_EQ(socket.Next(), "WATCHDOG=1");
  stalled = true;
  // Pings already on their way are read first; then the stall, once.
  std::string message = socket.Next();
  while (message == "WATCHDOG=1") message = socket.Next();
  EXPECT_EQ(message, "STATUS=lane checks made no progress for 7 s; watchdog pings withheld");
  // Several stalled rounds later, the lane recovers: nothing came between.
  while (stalled_ticks < 3) std::this_thread::sleep_for(10ms);
  stalled = false;
  EXPECT_EQ(socket.Next(), "STATUS=polling; watchdog pings resumed");
  EXPECT_EQ(socket.Next(), "WATCHDOG=1");
  pinger.Stop();
}

TEST(ServiceManagerTest, ReadyOnlyOnceEveryLaneHasPublished) {
  NotifySocket socket;
  ServiceManager service;
  auto progress = std::make_shared<poll::LaneProgress>(std::vector<std::string>{"checks", "locks"});
  service.Attach(progress, testing::ConfigFromToml(
                               "[[metric]]\nname = \"m\"\nsql = \"queries/booking/holds.sql\"\n"
                               "value = \"holds_active\"\n",
                               "dbname=x"));
  // A reload before the first READY sends nothing: that READY is the lanes'.
  service.Reloading();
  service.Reloaded(true);
  progress->MarkPublished(0);
  progress->MarkPublished(1);
  EXPECT_EQ(socket.Next(), "READY=1\nSTATUS=polling; every lane has published its first poll");
  service.Reloading();
  EXPECT_EQ(socket.Next().rfind("RELOADING=1\n", 0), 0u);
  service.Reloaded(false);
  EXPECT_EQ(socket.Next(), "READY=1\nSTATUS=polling; reload failed, running configuration kept");
  service.Reloaded(false);  // no second READY for one reload
  service.Stopping();
  EXPECT_EQ(socket.Next(), "STOPPING=1\nSTATUS=stopping");
}

}  // namespace
}  // namespace seatwatch::service
