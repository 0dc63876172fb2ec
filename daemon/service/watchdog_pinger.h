#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "service/notifier.h"

namespace seatwatch::service {

// Pings systemd's watchdog (WATCHDOG=1) every half interval, but only while
// every lane makes progress: `find_stall` names a lane whose heartbeat is
// older than the interval (see poll::LaneProgress::FindStall). While one is
// stalled the pings stop, so systemd restarts a daemon whose poller is
// wedged rather than one that is merely busy; the stall and the recovery
// are logged and shown in STATUS=. Start/Stop from one controlling thread;
// the pings come from a thread of its own.
class WatchdogPinger {
 public:
  using Clock = std::chrono::steady_clock;
  struct Stall {
    std::string lane;
    Clock::duration age;
  };
  using FindStall = std::function<std::optional<Stall>(Clock::duration max_age)>;

  WatchdogPinger(const Notifier& notifier, Clock::duration interval, FindStall find_stall);
  ~WatchdogPinger();
  WatchdogPinger(const WatchdogPinger&) = delete;
  WatchdogPinger& operator=(const WatchdogPinger&) = delete;

  void Start();
  void Stop();

 private:
  void Run();
  // One round: a ping, or the stall's status line; returns whether it pinged.
  bool Tick();

  const Notifier& notifier_;
  Clock::duration interval_;
  FindStall find_stall_;
  bool withholding_ = false;  // the pinger thread's alone
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
};

}  // namespace seatwatch::service
