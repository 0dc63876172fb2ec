#include "support/log_capture.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

#include "support/test_env.h"

namespace seatwatch::testing {

LogCapture::LogCapture() : path_(MakeTempDir("sw-log-capture") + "/stderr.log") {
  std::fflush(stderr);
  saved_ = dup(2);
  int fd = open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  dup2(fd, 2);
  close(fd);
}

LogCapture::~LogCapture() {
  std::fflush(stderr);
  dup2(saved_, 2);
  close(saved_);
}

std::string LogCapture::Text() const {
  std::fflush(stderr);
  return ReadFile(path_);
}

std::size_t CountOccurrences(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

}  // namespace seatwatch::testing
