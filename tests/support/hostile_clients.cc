#include "support/hostile_clients.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

namespace seatwatch::testing {

namespace {

enum class Kind { kSilent, kSlowloris, kIdler, kReconnect, kGuesser };

struct Client {
  Kind kind = Kind::kSilent;
  int fd = -1;
  bool connected = false;
  size_t sent = 0;
  std::chrono::steady_clock::time_point next_byte;
};

int OpenNonBlocking(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 &&
      errno != EINPROGRESS) {
    close(fd);
    return -1;
  }
  return fd;
}

const std::string kSlowHeader = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
const std::string kRequest = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

}  // namespace

HostileClients::HostileClients(int port, Counts counts, std::chrono::milliseconds slow_every,
                               std::string guess_authorization)
    : port_(port),
      counts_(counts),
      slow_every_(slow_every),
      guess_request_("GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\nAuthorization: " + guess_authorization +
                     "\r\n\r\n") {
  thread_ = std::thread([this] { Run(); });
}

HostileClients::~HostileClients() {
  stop_ = true;
  thread_.join();
}

void HostileClients::Run() {
  std::vector<Client> clients;
  auto add = [&](Kind kind, int n) {
    for (int i = 0; i < n; ++i) {
      Client client;
      client.kind = kind;
      client.fd = OpenNonBlocking(port_);
      clients.push_back(client);
    }
  };
  add(Kind::kSilent, counts_.silent);
  add(Kind::kSlowloris, counts_.slowloris);
  add(Kind::kIdler, counts_.idler);
  add(Kind::kReconnect, counts_.reconnect);
  add(Kind::kGuesser, counts_.guesser);

  auto drop = [&](Client& client) {
    close(client.fd);
    client.fd = -1;
    if (client.connected) --connected_;
    // A guesser's connection ends with each answer (HTTP/1.0): a guess, not
    // a cut.
    if (client.kind == Kind::kGuesser && client.connected) {
      ++guesses_;
    } else {
      ++closed_by_server_;
    }
    client.connected = false;
    if (client.kind == Kind::kReconnect || client.kind == Kind::kGuesser) {
      client.fd = OpenNonBlocking(port_);
      client.sent = 0;
    }
  };

  std::vector<pollfd> fds;
  char buffer[65536];
  while (!stop_) {
    fds.clear();
    for (const auto& client : clients) {
      short events = client.connected ? POLLIN : POLLOUT;
      fds.push_back({client.fd, events, 0});  // fd -1 is ignored by poll
    }
    poll(fds.data(), fds.size(), 50);
    auto now = std::chrono::steady_clock::now();
    for (size_t i = 0; i < clients.size(); ++i) {
      Client& client = clients[i];
      if (client.fd < 0) continue;
      short revents = fds[i].revents;
      if (!client.connected && (revents & (POLLOUT | POLLERR | POLLHUP))) {
        int error = 0;
        socklen_t length = sizeof error;
        getsockopt(client.fd, SOL_SOCKET, SO_ERROR, &error, &length);
        if (error != 0 || (revents & (POLLERR | POLLHUP))) {
          drop(client);
          continue;
        }
        client.connected = true;
        ++connected_;
        client.next_byte = now + slow_every_;
        if (client.kind == Kind::kIdler) send(client.fd, kRequest.data(), kRequest.size(), MSG_NOSIGNAL);
        if (client.kind == Kind::kGuesser) {
          send(client.fd, guess_request_.data(), guess_request_.size(), MSG_NOSIGNAL);
        }
        continue;
      }
      if (client.connected && (revents & (POLLIN | POLLERR | POLLHUP))) {
        // An idler reads its answer and stays, a guesser until the end of
        // its answer; end of stream means closed.
        ssize_t n = recv(client.fd, buffer, sizeof buffer, 0);
        if (n <= 0) {
          drop(client);
          continue;
        }
      }
      if (client.kind == Kind::kSlowloris && client.connected && now >= client.next_byte) {
        char byte = client.sent < kSlowHeader.size() ? kSlowHeader[client.sent] : 'a';
        if (send(client.fd, &byte, 1, MSG_NOSIGNAL) != 1) {
          drop(client);
          continue;
        }
        ++client.sent;
        client.next_byte = now + slow_every_;
      }
    }
  }
  for (auto& client : clients) {
    if (client.fd >= 0) close(client.fd);
  }
}

}  // namespace seatwatch::testing
