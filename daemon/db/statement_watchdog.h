#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <pqxx/connection>

namespace seatwatch::db {

// A client-side deadline for the statements of one session. The server's
// statement_timeout cannot help when the connection itself stops answering
// (a proxy or NAT that stalls with the socket open; TCP keepalives are
// answered by the stalled middlebox): libpq would wait forever. While armed
// around some work on a connection, the watchdog gives up on it when
//   - a TCP connection has received nothing for `silence` (from TCP_INFO,
//     so a check of several statements that each answer in time is fine), or
//   - the work has lasted `total` (any socket, also a Unix socket to a server
//     that is itself stuck),
// or at once on Abort() (SIGTERM). Giving up: `on_give_up` is called (the
// poller marks its lane overdue), a cancel request is sent (PQcancel, from a
// thread of its own, since through a stalled path it may never return), and
// after a short grace the socket is shut down, so the blocked libpq call
// returns with a broken connection at once. At most one cancel thread is
// outstanding per watchdog: through a persistent stall PQcancel never
// returns, and each give-up would otherwise leave one more thread and socket
// behind; while one is outstanding a give-up only drops the connection.
//
// Thread-safety: Arm/Disarm from the session's owner thread; Abort from any
// thread. on_give_up runs on the watchdog's thread with its lock held:
// Disarm() returns only after it has finished.
class StatementWatchdog {
 public:
  using Clock = std::chrono::steady_clock;

  explicit StatementWatchdog(std::string name, std::function<void()> on_give_up = [] {});
  ~StatementWatchdog();
  StatementWatchdog(const StatementWatchdog&) = delete;
  StatementWatchdog& operator=(const StatementWatchdog&) = delete;

  void Arm(std::shared_ptr<pqxx::connection> connection, Clock::duration silence,
           Clock::duration total);
  // Returns whether the watchdog gave up on the work since Arm().
  bool Disarm();
  // Cancels and drops what is in flight now, and anything armed after.
  void Abort();

 private:
  void Loop();
  bool Overdue(Clock::time_point now) const;
  void GiveUp(Clock::time_point now, const char* why);

  const std::string name_;
  const std::function<void()> on_give_up_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool quit_ = false;
  bool aborting_ = false;
  bool armed_ = false;
  bool gave_up_ = false;
  bool dropped_ = false;
  std::shared_ptr<pqxx::connection> connection_;
  int fd_ = -1;  // our dup() of the connection's socket, valid while armed
  Clock::time_point armed_at_{};
  Clock::time_point gave_up_at_{};
  Clock::duration silence_{};
  Clock::duration total_{};
  // Set while a cancel thread runs; shared with it, since it may outlive us.
  std::shared_ptr<std::atomic<bool>> cancel_outstanding_ =
      std::make_shared<std::atomic<bool>>(false);
  std::thread thread_;
};

}  // namespace seatwatch::db
