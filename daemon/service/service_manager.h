#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "config/config.h"
#include "poll/lane_progress.h"
#include "service/notifier.h"
#include "service/watchdog_pinger.h"

namespace seatwatch::service {

// The daemon as systemd sees it (Type=notify, WatchdogSec=):
//   READY=1     once every lane has published the results of its first
//               poll (success or not: from then on /metrics serves real
//               data), sent from the lane thread that completes it;
//   WATCHDOG=1  every half interval while every lane makes progress (see
//               WatchdogPinger; the lanes stamp at least every quarter);
//   RELOADING=1 and READY=1 around a SIGHUP reload, once ready (a reload
//               before the first READY leaves that READY to the lanes);
//   STOPPING=1  at shutdown.
// All of it a no-op without NOTIFY_SOCKET. Attach/StartWatchdog/Reloading/
// Reloaded/Stopping from the controlling thread; LanesReady from any.
class ServiceManager {
 public:
  ServiceManager();
  ~ServiceManager();
  ServiceManager(const ServiceManager&) = delete;
  ServiceManager& operator=(const ServiceManager&) = delete;

  // Before the lanes start: their stamp period and the READY=1 callback.
  // Warns when the watchdog interval leaves no room for one connect attempt
  // or one statement of `config` (a slow poll would be taken for a wedged one).
  void Attach(std::shared_ptr<poll::LaneProgress> progress, const config::Config& config);
  // After the lanes have started (with a watchdog only).
  void StartWatchdog();
  void Reloading();
  void Reloaded(bool applied);
  void Stopping();

  const Notifier& notifier() const { return notifier_; }

 private:
  void LanesReady();

  Notifier notifier_;
  std::unique_ptr<WatchdogPinger> pinger_;
  std::mutex mutex_;
  bool ready_ = false;
  bool reloading_ = false;
};

}  // namespace seatwatch::service
