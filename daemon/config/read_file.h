#pragma once

#include <cstddef>
#include <string>

namespace seatwatch::config {

// The most a config file or a SQL file it names may hold.
constexpr size_t kMaxFileBytes = 1 << 20;

// Reads a whole regular file of at most `max_bytes`. Anything else is refused
// before a byte is read: a FIFO would block the reader (the daemon's start,
// --check-config and a SIGHUP alike, and SIGTERM is taken by the thread that
// reloads), a device such as /dev/zero never ends. Throws std::runtime_error
// whose text is the reason alone ("not a regular file (a FIFO)"), for the
// caller to prefix with file, line and key.
std::string ReadRegularFile(const std::string& path, size_t max_bytes = kMaxFileBytes);

}  // namespace seatwatch::config
