#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace seatwatch::service {

// The service manager's notification socket, through libsystemd's
// sd_notify: READY=1, RELOADING=1, STOPPING=1, WATCHDOG=1 and STATUS=
// lines (sd_notify(3)). Without NOTIFY_SOCKET (not started by systemd with
// Type=notify, or run by hand) every call is a no-op. Thread-safe: each
// sd_notify call opens its own datagram socket.
class Notifier {
 public:
  // Reads NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID once.
  Notifier();

  bool active() const { return active_; }
  // The service's watchdog interval (WatchdogSec=) when systemd expects
  // pings from this process, else nothing.
  std::optional<std::chrono::microseconds> watchdog_interval() const { return watchdog_; }

  // One datagram of newline-separated assignments; false if it could not
  // be sent (logged once per kind of failure by the caller, not here).
  bool Send(const std::string& assignments) const;

  bool Ready(const std::string& status) const;
  // RELOADING=1 with MONOTONIC_USEC (systemd 253 wants it for
  // Type=notify-reload; older ones ignore it).
  bool Reloading(const std::string& status) const;
  bool Stopping() const;
  bool Watchdog() const;
  bool Status(const std::string& status) const;

 private:
  bool active_ = false;
  std::optional<std::chrono::microseconds> watchdog_;
};

// "STATUS=<text>" with newlines turned into spaces: a newline would start a
// new assignment in the datagram. Pure.
std::string StatusLine(const std::string& text);

}  // namespace seatwatch::service
