#pragma once

#include <cstddef>
#include <string>

namespace seatwatch::metrics {

// What one /api response may be at most: a few MiB is what a browser or jq
// takes in its stride, and what a scrape-side tool should ever be sent.
inline constexpr size_t kApiMaxBytes = 4 << 20;

// Cuts a JSON document whose top level is an object to at most max_bytes
// and keeps it valid JSON: only whole members of the top-level object and
// whole elements of the arrays and objects directly inside it are kept (a
// lock root with its waiters is kept or dropped as one), the containers
// left open are closed, and "truncated": true is added to the top level.
// A document within max_bytes is returned as it is. A top level that is
// not an object becomes {"truncated": true}.
std::string CapJson(std::string json, size_t max_bytes = kApiMaxBytes);

}  // namespace seatwatch::metrics
