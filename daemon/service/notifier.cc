#include "service/notifier.h"

#include <systemd/sd-daemon.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>

namespace seatwatch::service {

namespace {

std::uint64_t MonotonicMicros() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<std::uint64_t>(now.tv_sec) * 1000000u +
         static_cast<std::uint64_t>(now.tv_nsec) / 1000u;
}

}  // namespace

Notifier::Notifier() {
  const char* socket = std::getenv("NOTIFY_SOCKET");
  active_ = socket != nullptr && *socket != '\0';
  std::uint64_t usec = 0;
  // > 0 only when WATCHDOG_USEC is set and WATCHDOG_PID, if set, is ours: a
  // child that inherited the variables must not ping for its parent.
  if (active_ && sd_watchdog_enabled(0, &usec) > 0 && usec > 0) {
    watchdog_ = std::chrono::microseconds(usec);
  }
}

bool Notifier::Send(const std::string& assignments) const {
  if (!active_) return true;
  return sd_notify(0, assignments.c_str()) > 0;
}

bool Notifier::Ready(const std::string& status) const {
  return Send("READY=1\n" + StatusLine(status));
}

bool Notifier::Reloading(const std::string& status) const {
  return Send("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(MonotonicMicros()) + "\n" +
              StatusLine(status));
}

bool Notifier::Stopping() const { return Send("STOPPING=1\n" + StatusLine("stopping")); }

bool Notifier::Watchdog() const { return Send("WATCHDOG=1"); }

bool Notifier::Status(const std::string& status) const { return Send(StatusLine(status)); }

std::string StatusLine(const std::string& text) {
  std::string line = "STATUS=" + text;
  std::replace(line.begin(), line.end(), '\n', ' ');
  return line;
}

}  // namespace seatwatch::service
