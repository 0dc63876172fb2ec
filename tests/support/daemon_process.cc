#include "support/daemon_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "support/test_env.h"

namespace seatwatch::testing {

DaemonProcess::DaemonProcess(const std::vector<std::string>& args,
                             const std::vector<std::string>& env) {
  log_path_ = MakeTempDir("seatwatch-log") + "/stderr.log";
  std::string binary = SeatwatchBinary();
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    int fd = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, STDERR_FILENO);
    dup2(fd, STDOUT_FILENO);
    for (const auto& assignment : env) putenv(const_cast<char*>(assignment.c_str()));
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(binary.c_str()));
    for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
}

DaemonProcess::~DaemonProcess() {
  if (pid_ > 0) Stop();
}

void DaemonProcess::Signal(int signal) {
  if (pid_ > 0) kill(pid_, signal);
}

bool DaemonProcess::Running() {
  if (pid_ <= 0) return false;
  int status = 0;
  pid_t done = waitpid(pid_, &status, WNOHANG);
  if (done == pid_) {
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    pid_ = -1;
    return false;
  }
  return true;
}

bool DaemonProcess::WaitExit(std::chrono::milliseconds timeout) {
  return WaitFor([&] { return !Running(); }, timeout);
}

int DaemonProcess::Stop() {
  if (pid_ <= 0) return exit_code_;
  kill(pid_, SIGTERM);
  for (int i = 0; i < 300; ++i) {
    if (!Running()) return exit_code_;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  exit_code_ = -SIGKILL;
  return exit_code_;
}

std::string DaemonProcess::Log() const { return ReadFile(log_path_); }

bool WaitFor(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (condition()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double Sample(const std::string& metrics_text, const std::string& series) {
  std::istringstream lines(metrics_text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line.size() > series.size() && line.compare(0, series.size(), series) == 0 &&
        line[series.size()] == ' ') {
      return std::stod(line.substr(series.size() + 1));
    }
  }
  return std::numeric_limits<double>::quiet_NaN();
}

}  // namespace seatwatch::testing
