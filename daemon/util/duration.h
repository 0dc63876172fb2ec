#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace seatwatch::util {

using Millis = std::chrono::milliseconds;

// The largest duration ParseDuration accepts: 100 years (876000h), so that
// any parsed value still fits std::chrono::nanoseconds when added to a clock.
// Config keys have much narrower ranges of their own.
inline constexpr Millis kMaxDuration{876000LL * 60 * 60 * 1000};

// Parses "250ms", "5s", "2m", "1h" and sums like "1m30s". Throws
// std::invalid_argument with a readable reason; a bare number is rejected so
// that "5" can never silently mean five milliseconds. Overflow-safe: every
// part and partial sum is checked against kMaxDuration before it is computed.
Millis ParseDuration(std::string_view text);

// The shortest exact rendering: 1500ms -> "1500ms", 120000ms -> "2m".
std::string FormatDuration(Millis value);

double ToSeconds(Millis value);

}  // namespace seatwatch::util
