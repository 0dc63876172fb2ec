#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace seatwatch::util {

using Millis = std::chrono::milliseconds;

// Parses "250ms", "5s", "2m", "1h" and sums like "1m30s". Throws
// std::invalid_argument with a readable reason; a bare number is rejected so
// that "5" can never silently mean five milliseconds.
Millis ParseDuration(std::string_view text);

// The shortest exact rendering: 1500ms -> "1500ms", 120000ms -> "2m".
std::string FormatDuration(Millis value);

double ToSeconds(Millis value);

}  // namespace seatwatch::util
