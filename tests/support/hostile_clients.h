#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

namespace seatwatch::testing {

// Hostile TCP clients against 127.0.0.1:port, all on one background thread
// (poll), for as long as the object lives:
//   silent     connect, send nothing
//   slowloris  send one byte of an endless request header every `slow_every`
//   idler      one complete keep-alive request, read the answer, stay idle
//   reconnect  silent, and connect again whenever the server closes it
//   guesser    one GET /metrics with `guess_authorization` (wrong Basic
//              credentials), read the answer until the server closes, then
//              again on a new connection: a password guesser, without pause
// The destructor stops the thread and closes every socket. The same kinds as
// bench/http-attack (guessers aside), at a size a test can afford.
class HostileClients {
 public:
  struct Counts {
    int silent = 0;
    int slowloris = 0;
    int idler = 0;
    int reconnect = 0;
    int guesser = 0;
  };
  HostileClients(int port, Counts counts,
                 std::chrono::milliseconds slow_every = std::chrono::seconds(1),
                 std::string guess_authorization = "Basic cHJvbWV0aGV1czp3cm9uZw==");  // prometheus:wrong
  ~HostileClients();
  HostileClients(const HostileClients&) = delete;
  HostileClients& operator=(const HostileClients&) = delete;

  // Sockets the server has closed so far (each reconnect opens a new one).
  int ClosedByServer() const { return closed_by_server_.load(); }
  // Sockets connected right now.
  int Connected() const { return connected_.load(); }
  // Answers the guessers have read to the end so far.
  int Guesses() const { return guesses_.load(); }

 private:
  void Run();

  int port_;
  Counts counts_;
  std::chrono::milliseconds slow_every_;
  std::string guess_request_;
  std::atomic<bool> stop_{false};
  std::atomic<int> closed_by_server_{0};
  std::atomic<int> connected_{0};
  std::atomic<int> guesses_{0};
  std::thread thread_;
};

}  // namespace seatwatch::testing
