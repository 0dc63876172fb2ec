#include "service/service_manager.h"

#include <algorithm>
#include <cstdio>

#include "util/log.h"

namespace seatwatch::service {

namespace {

std::string Seconds(std::chrono::microseconds value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", std::chrono::duration<double>(value).count());
  return text;
}

}  // namespace

ServiceManager::ServiceManager() = default;

ServiceManager::~ServiceManager() {
  if (pinger_) pinger_->Stop();
}

void ServiceManager::Attach(std::shared_ptr<poll::LaneProgress> progress,
                            const config::Config& config) {
  progress->OnAllPublished([this] { LanesReady(); });
  auto interval = notifier_.watchdog_interval();
  if (!interval) return;
  // A lane waiting between polls wakes to stamp four times per interval, so
  // a late wake-up on a loaded machine is never taken for a stall.
  progress->SetStampPeriod(*interval / 4);
  auto longest = std::max({config.database.connect_timeout, config.database.statement_timeout,
                           config.locks.statement_timeout});
  if (*interval <= longest) {
    log::Warn("WatchdogSec is not longer than connect_timeout or a statement_timeout: a slow "
              "connect or statement would get seatwatch restarted",
              {{"watchdog_seconds", Seconds(*interval)},
               {"longest_seconds",
                Seconds(std::chrono::duration_cast<std::chrono::microseconds>(longest))}});
  }
  pinger_ = std::make_unique<WatchdogPinger>(
      notifier_, *interval, [progress](WatchdogPinger::Clock::duration max_age) {
        std::optional<WatchdogPinger::Stall> out;
        if (auto stall = progress->FindStall(max_age, poll::LaneProgress::Clock::now())) {
          out = WatchdogPinger::Stall{stall->lane, stall->age};
        }
        return out;
      });
}

void ServiceManager::StartWatchdog() {
  if (!pinger_) return;
  log::Info("systemd watchdog enabled",
            {{"watchdog_seconds", Seconds(*notifier_.watchdog_interval())}});
  pinger_->Start();
}

void ServiceManager::LanesReady() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (ready_) return;
  ready_ = true;
  if (!notifier_.active()) return;
  notifier_.Ready("polling; every lane has published its first poll");
  log::Info("notified systemd: ready");
}

void ServiceManager::Reloading() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!ready_) return;
  reloading_ = true;
  notifier_.Reloading("reloading the configuration");
}

void ServiceManager::Reloaded(bool applied) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!reloading_) return;
  reloading_ = false;
  notifier_.Ready(applied ? "polling; configuration reloaded"
                          : "polling; reload failed, running configuration kept");
}

void ServiceManager::Stopping() {
  if (pinger_) pinger_->Stop();
  notifier_.Stopping();
}

}  // namespace seatwatch::service
