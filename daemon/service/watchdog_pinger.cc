#include "service/watchdog_pinger.h"

#include <cmath>
#include <cstdio>

#include "util/log.h"
#include "util/thread_name.h"

namespace seatwatch::service {

namespace {

// Seconds to a tenth: "7", "61.2", "0.5".
std::string Seconds(WatchdogPinger::Clock::duration age) {
  char text[32];
  std::snprintf(text, sizeof text, "%g",
                std::round(std::chrono::duration<double>(age).count() * 10) / 10);
  return text;
}

}  // namespace

WatchdogPinger::WatchdogPinger(const Notifier& notifier, Clock::duration interval,
                               FindStall find_stall)
    : notifier_(notifier), interval_(interval), find_stall_(std::move(find_stall)) {}

WatchdogPinger::~WatchdogPinger() { Stop(); }

void WatchdogPinger::Start() {
  if (thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = false;
  }
  thread_ = std::thread([this] { Run(); });
}

void WatchdogPinger::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    wake_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

bool WatchdogPinger::Tick() {
  std::optional<Stall> stall = find_stall_(interval_);
  if (!stall) {
    if (withholding_) {
      withholding_ = false;
      log::Info("every lane is making progress again; watchdog pings resumed");
      notifier_.Status("polling; watchdog pings resumed");
    }
    notifier_.Watchdog();
    return true;
  }
  if (!withholding_) {
    withholding_ = true;
    log::Error("a lane made no progress for longer than the watchdog interval; "
               "watchdog pings withheld, so systemd restarts seatwatch",
               {{"lane", stall->lane},
                {"stalled_seconds", Seconds(stall->age)},
                {"watchdog_seconds", Seconds(interval_)}});
    notifier_.Status("lane " + stall->lane + " made no progress for " + Seconds(stall->age) +
                     " s; watchdog pings withheld");
  }
  return false;
}

void WatchdogPinger::Run() {
  thread_name::Set("sw-notify");
  // Half the interval, as sd_watchdog_enabled(3) advises: one late ping
  // still arrives in time.
  auto period = interval_ / 2;
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    lock.unlock();
    Tick();
    lock.lock();
    wake_.wait_for(lock, period, [this] { return stop_; });
  }
}

}  // namespace seatwatch::service
