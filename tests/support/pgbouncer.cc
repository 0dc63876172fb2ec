#include "support/pgbouncer.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <thread>
#include <vector>

#include "support/test_env.h"

namespace seatwatch::testing {

namespace {

constexpr const char* kPgBouncer = "/usr/sbin/pgbouncer";

std::string Trim(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

bool Accepts(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  close(fd);
  return ok;
}

}  // namespace

PgBouncer::PgBouncer(const Options& options) : options_(options) {
  if (access(kPgBouncer, X_OK) != 0) {
    throw std::runtime_error(std::string(kPgBouncer) +
                             " not found: install Debian's pgbouncer (scripts/lib/deps.sh)");
  }
  dir_ = MakeTempDir("seatwatch-pgbouncer");
  port_ = FreePort();
  std::string server_port = Trim(ReadFile(ScratchPgDir() + "/port"));
  WriteFile(dir_ + "/userlist.txt", "\"" + options_.user + "\" \"\"\n");
  WriteFile(dir_ + "/pgbouncer.ini",
            "[databases]\n" + options_.dbname + " = host=127.0.0.1 port=" + server_port +
                " dbname=" + options_.dbname + "\n"
                "[pgbouncer]\n"
                "listen_addr = 127.0.0.1\n"
                "listen_port = " + std::to_string(port_) + "\n"
                "unix_socket_dir =\n"
                "auth_type = trust\n"
                "auth_file = " + dir_ + "/userlist.txt\n"
                "pool_mode = transaction\n"
                "default_pool_size = " + std::to_string(options_.pool_size) + "\n"
                "max_client_conn = 50\n" +
                (options_.ignore_options ? "ignore_startup_parameters = options\n" : "") +
                "logfile = " + dir_ + "/pgbouncer.log\n");
  bool root = geteuid() == 0;
  uid_t uid = 0;
  gid_t gid = 0;
  if (root) {
    const passwd* postgres = getpwnam("postgres");
    if (!postgres) throw std::runtime_error("running as root but there is no postgres user");
    uid = postgres->pw_uid;
    gid = postgres->pw_gid;
    if (chown(dir_.c_str(), uid, gid) != 0) throw std::runtime_error("cannot chown " + dir_);
  }
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    int fd = open((dir_ + "/stderr.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, STDERR_FILENO);
    dup2(fd, STDOUT_FILENO);
    if (root && (setgroups(0, nullptr) != 0 || setgid(gid) != 0 || setuid(uid) != 0)) _exit(126);
    std::string ini = dir_ + "/pgbouncer.ini";
    execl(kPgBouncer, kPgBouncer, ini.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  for (int i = 0; i < 100; ++i) {
    if (Accepts(port_)) return;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw std::runtime_error("pgbouncer exited at start: " + Log());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  throw std::runtime_error("pgbouncer does not listen on port " + std::to_string(port_) + ": " +
                           Log());
}

PgBouncer::~PgBouncer() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    int status = 0;
    bool done = false;
    for (int i = 0; i < 100 && !done; ++i) {
      done = waitpid(pid_, &status, WNOHANG) == pid_;
      if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (!done) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
    }
  }
  std::string output;
  RunCommand("rm -rf '" + dir_ + "'", &output);
}

std::string PgBouncer::dsn() const {
  return "host=127.0.0.1 port=" + std::to_string(port_) + " user=" + options_.user +
         " dbname=" + options_.dbname;
}

std::string PgBouncer::Log() const {
  std::string text;
  for (const char* name : {"/stderr.log", "/pgbouncer.log"}) {
    try {
      text += ReadFile(dir_ + name);
    } catch (const std::exception&) {
    }
  }
  return text;
}

}  // namespace seatwatch::testing
