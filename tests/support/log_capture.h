#pragma once

#include <cstddef>
#include <string>

namespace seatwatch::testing {

// The process's log lines (util/log writes them to stderr) while it lives:
// fd 2 goes to a file, and back when it ends, so that lines written by other
// threads (a worker, a lane) are caught too. Text() reads what is there.
class LogCapture {
 public:
  LogCapture();
  ~LogCapture();
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  std::string Text() const;

 private:
  std::string path_;
  int saved_ = -1;
};

// How many times `part` occurs in `text` (overlaps included).
std::size_t CountOccurrences(const std::string& text, const std::string& part);

}  // namespace seatwatch::testing
