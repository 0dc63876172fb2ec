#include "db/statement_watchdog.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <optional>

#include "util/log.h"
#include "util/thread_name.h"

namespace seatwatch::db {

namespace {

using namespace std::chrono_literals;

// How often an armed watchdog looks at its connection.
constexpr auto kTick = 100ms;
// Between the cancel request and the drop: long enough for a reachable server
// to answer the cancel (the statement then fails with 57014 and the session
// lives on), short enough for SIGTERM to stay well within 2 s.
constexpr auto kGrace = 300ms;

// Time since the socket last received data, or nullopt when it is not TCP.
std::optional<StatementWatchdog::Clock::duration> SinceLastReceive(int fd) {
  tcp_info info{};
  socklen_t size = sizeof(info);
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &size) != 0) return std::nullopt;
  return std::chrono::milliseconds(info.tcpi_last_data_recv);
}

}  // namespace

StatementWatchdog::StatementWatchdog(std::string name, std::function<void()> on_give_up)
    : name_(std::move(name)), on_give_up_(std::move(on_give_up)), thread_([this] { Loop(); }) {}

StatementWatchdog::~StatementWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    quit_ = true;
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
    connection_.reset();
  }
  wake_.notify_all();
  thread_.join();
}

void StatementWatchdog::Arm(std::shared_ptr<pqxx::connection> connection,
                            Clock::duration silence, Clock::duration total) {
  // Our own descriptor of the socket: libpq may close its own when the
  // connection breaks while we are armed, and the number could then be
  // reused by an unrelated socket that a shutdown() must never hit.
  int fd = connection ? dup(connection->sock()) : -1;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (fd_ >= 0) close(fd_);
    fd_ = fd;
    connection_ = std::move(connection);
    armed_ = true;
    gave_up_ = false;
    dropped_ = false;
    armed_at_ = Clock::now();
    silence_ = silence;
    total_ = total;
  }
  wake_.notify_all();
}

bool StatementWatchdog::Disarm() {
  std::lock_guard<std::mutex> lock(mutex_);
  armed_ = false;
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  connection_.reset();
  return gave_up_;
}

void StatementWatchdog::Abort() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    aborting_ = true;
  }
  wake_.notify_all();
}

bool StatementWatchdog::Overdue(Clock::time_point now) const {
  auto running = now - armed_at_;
  if (running >= total_) return true;
  if (fd_ < 0) return false;
  auto since = SinceLastReceive(fd_);
  return since && std::min(*since, running) >= silence_;
}

void StatementWatchdog::GiveUp(Clock::time_point now, const char* why) {
  gave_up_ = true;
  gave_up_at_ = now;
  log::Warn("giving up on the statement in flight: cancelling it and dropping the connection",
            {{"session", name_}, {"why", why}});
  on_give_up_();
  if (auto connection = connection_) {
    if (cancel_outstanding_->exchange(true)) {
      // An earlier cancel is still stuck in the path: another would be stuck
      // beside it. The drop below ends this statement anyway.
      log::Debug("an earlier cancel request is still unanswered; not sending another",
                 {{"session", name_}});
      return;
    }
    // PQcancel opens a connection of its own and waits for the server to
    // close it: through a stalled path that never happens, so it runs on a
    // thread nobody waits for. It holds the connection object until it
    // returns; Session::Disconnect leaves the close to the last holder.
    std::thread([connection, outstanding = cancel_outstanding_] {
      thread_name::Set("sw-cancel");
      try {
        connection->cancel_query();
      } catch (const std::exception&) {
        // The drop below ends the statement anyway.
      }
      outstanding->store(false);
    }).detach();
  }
}

void StatementWatchdog::Loop() {
  thread_name::Set("sw-watchdog");
  std::unique_lock<std::mutex> lock(mutex_);
  while (!quit_) {
    if (!armed_) {
      wake_.wait(lock);
      continue;
    }
    auto now = Clock::now();
    if (!gave_up_ && aborting_) {
      GiveUp(now, "stopping");
    } else if (!gave_up_ && Overdue(now)) {
      GiveUp(now, "no answer within statement_timeout plus a margin");
    }
    if (gave_up_ && !dropped_ && now - gave_up_at_ >= (aborting_ ? kGrace / 3 : kGrace)) {
      // The socket itself, through our descriptor: the owner's blocked
      // libpq call sees the connection end and returns.
      if (fd_ >= 0) shutdown(fd_, SHUT_RDWR);
      dropped_ = true;
    }
    wake_.wait_for(lock, gave_up_ && !dropped_ ? kGrace / 3 : kTick);
  }
}

}  // namespace seatwatch::db
