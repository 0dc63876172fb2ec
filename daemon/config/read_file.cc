#include "config/read_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace seatwatch::config {

namespace {

std::string KindOf(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a file";
}

void RequireRegular(const struct stat& info) {
  if (!S_ISREG(info.st_mode)) throw std::runtime_error("not a regular file (" + KindOf(info.st_mode) + ")");
}

std::string TooLarge(size_t max_bytes, unsigned long long size) {
  std::string limit = max_bytes % (1 << 20) == 0 ? std::to_string(max_bytes >> 20) + " MiB"
                                                 : std::to_string(max_bytes) + " bytes";
  return "larger than " + limit + " (" + std::to_string(size) + " bytes)";
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

std::string ReadRegularFile(const std::string& path, size_t max_bytes) {
  if (path.find('\0') != std::string::npos) throw std::runtime_error("the path contains a NUL character");
  // stat first so that a device is never even opened; then open without
  // blocking (a FIFO swapped in meanwhile would otherwise wait for a writer)
  // and check the opened file again.
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) throw std::runtime_error(std::strerror(errno));
  RequireRegular(info);
  Fd fd(open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) throw std::runtime_error(std::strerror(errno));
  if (fstat(fd.get(), &info) != 0) throw std::runtime_error(std::strerror(errno));
  RequireRegular(info);
  if (static_cast<unsigned long long>(info.st_size) > max_bytes) {
    throw std::runtime_error(TooLarge(max_bytes, static_cast<unsigned long long>(info.st_size)));
  }
  // The file may grow while it is read: never take more than the cap.
  std::string text;
  char buffer[16 * 1024];
  while (true) {
    ssize_t got = read(fd.get(), buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw std::runtime_error(std::strerror(errno));
    if (got == 0) break;
    text.append(buffer, static_cast<size_t>(got));
    if (text.size() > max_bytes) throw std::runtime_error(TooLarge(max_bytes, text.size()));
  }
  return text;
}

}  // namespace seatwatch::config
