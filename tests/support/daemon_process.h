#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace seatwatch::testing {

// The built seatwatch binary as a child process, its stderr in a file.
// The destructor sends SIGTERM and waits, so a failing test leaves nothing.
class DaemonProcess {
 public:
  DaemonProcess(const std::vector<std::string>& args, const std::vector<std::string>& env = {});
  ~DaemonProcess();

  // SIGTERM, then the exit code (or -signal).
  int Stop();
  void Signal(int signal);
  bool Running();
  // Whether the process ends by itself within `timeout` (--once,
  // --check-config, a refused start); Stop() then returns its exit code.
  bool WaitExit(std::chrono::milliseconds timeout);
  std::string Log() const;
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  std::string log_path_;
  int exit_code_ = 0;
};

// Polls `condition` every 100ms until it holds or `timeout` passes.
bool WaitFor(const std::function<bool()>& condition, std::chrono::milliseconds timeout);

// Seconds on the steady clock since `start`.
double SecondsSince(std::chrono::steady_clock::time_point start);

// Extracts the value of one exposition line, e.g. Sample(text,
// "seatwatch_up") or Sample(text, "seatwatch_invariant_ok{invariant=\"x\"}").
// Returns NaN when the series is absent.
double Sample(const std::string& metrics_text, const std::string& series);

}  // namespace seatwatch::testing
