#pragma once

#include <string>

namespace seatwatch::testing {

// Inflates one whole gzip member with zlib, which checks the trailer's
// CRC-32 and length. Throws std::runtime_error with zlib's reason if the
// member is corrupt or truncated, or if bytes follow it.
std::string Gunzip(const std::string& member);

}  // namespace seatwatch::testing
