#pragma once

#include <sys/types.h>

#include <string>

namespace seatwatch::testing {

// tests/support/stall_proxy.py as a child process: a TCP proxy on 127.0.0.1
// in front of `target_port` that can be told to stop forwarding while every
// socket stays open (a stalled middlebox), and to resume. Stall() and
// Resume() return once the proxy has acknowledged. The destructor ends it.
// One owner thread.
class StallProxy {
 public:
  explicit StallProxy(int target_port);
  ~StallProxy();
  StallProxy(const StallProxy&) = delete;
  StallProxy& operator=(const StallProxy&) = delete;

  int port() const { return port_; }
  void Stall();
  // Stops forwarding on the connections open now, for good (until Resume),
  // their sockets left open; connections made later forward normally: one
  // session's path stalled while the server stays reachable.
  void HoldOpen();
  void Resume();

 private:
  void Command(const std::string& command);
  std::string ReadLine();

  pid_t pid_ = -1;
  int to_proxy_ = -1;
  int from_proxy_ = -1;
  int port_ = 0;
};

// The scratch cluster's TCP port on 127.0.0.1.
int ScratchTcpPort();

}  // namespace seatwatch::testing
