#include "support/stall_proxy.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdexcept>

#include "support/test_env.h"

namespace seatwatch::testing {

StallProxy::StallProxy(int target_port) {
  int in[2];
  int out[2];
  if (pipe(in) != 0 || pipe(out) != 0) throw std::runtime_error("pipe failed");
  std::string script = SourceDir() + "/tests/support/stall_proxy.py";
  std::string port = std::to_string(target_port);
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    dup2(in[0], STDIN_FILENO);
    dup2(out[1], STDOUT_FILENO);
    close(in[1]);
    close(out[0]);
    execlp("python3", "python3", script.c_str(), port.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  to_proxy_ = in[1];
  from_proxy_ = out[0];
  port_ = std::stoi(ReadLine());
}

StallProxy::~StallProxy() {
  if (to_proxy_ >= 0) close(to_proxy_);  // EOF: the proxy ends
  if (from_proxy_ >= 0) close(from_proxy_);
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
}

void StallProxy::Stall() { Command("stall"); }
void StallProxy::HoldOpen() { Command("hold"); }
void StallProxy::Resume() { Command("resume"); }

void StallProxy::Command(const std::string& command) {
  std::string line = command + "\n";
  if (write(to_proxy_, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
    throw std::runtime_error("stall proxy: write failed");
  }
  if (ReadLine() != "ok") throw std::runtime_error("stall proxy did not acknowledge " + command);
}

std::string StallProxy::ReadLine() {
  std::string line;
  char c = 0;
  while (read(from_proxy_, &c, 1) == 1) {
    if (c == '\n') return line;
    line.push_back(c);
  }
  throw std::runtime_error("stall proxy ended");
}

int ScratchTcpPort() {
  std::string text = ReadFile(ScratchPgDir() + "/port");
  return std::stoi(text);
}

}  // namespace seatwatch::testing
