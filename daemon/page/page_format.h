#pragma once

#include <string>

namespace seatwatch::page {

// How the status page writes times and numbers, for a person reading at a
// glance. Pure.

// "0.4s", "12.0s", "3m 12s", "2h 05m", "3d 4h": precise while short, coarse
// once long. Negative values (clock steps) show as "0.0s".
std::string FormatAge(double seconds);

// "2026-12-01 17:40:10 UTC"; "never" for 0 or less.
std::string FormatUtc(double unix_seconds);

// "2026-12-01 17:40:10 UTC (3m 12s ago)"; "never" for 0 or less.
std::string FormatWhen(double unix_seconds, double now_unix);

// A count or value as a person writes it: "3", "2.5", "1e+12".
std::string FormatNumber(double value);

}  // namespace seatwatch::page
