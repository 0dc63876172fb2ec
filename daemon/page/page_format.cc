#include "page/page_format.h"

#include <cmath>
#include <cstdio>
#include <ctime>

namespace seatwatch::page {

std::string FormatAge(double seconds) {
  if (!(seconds > 0)) seconds = 0;  // also NaN
  char text[48];
  if (seconds < 60) {
    std::snprintf(text, sizeof text, "%.1fs", seconds);
    return text;
  }
  auto whole = static_cast<long long>(seconds);
  if (whole < 3600) {
    std::snprintf(text, sizeof text, "%lldm %02llds", whole / 60, whole % 60);
  } else if (whole < 86400) {
    std::snprintf(text, sizeof text, "%lldh %02lldm", whole / 3600, whole % 3600 / 60);
  } else {
    std::snprintf(text, sizeof text, "%lldd %lldh", whole / 86400, whole % 86400 / 3600);
  }
  return text;
}

std::string FormatUtc(double unix_seconds) {
  if (!(unix_seconds > 0)) return "never";
  auto whole = static_cast<std::time_t>(unix_seconds);
  std::tm utc{};
  gmtime_r(&whole, &utc);
  char text[40];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &utc);
  return text;
}

std::string FormatWhen(double unix_seconds, double now_unix) {
  if (!(unix_seconds > 0)) return "never";
  return FormatUtc(unix_seconds) + " (" + FormatAge(now_unix - unix_seconds) + " ago)";
}

std::string FormatNumber(double value) {
  char text[40];
  if (std::isfinite(value) && std::fabs(value) < 1e15 && value == std::floor(value)) {
    std::snprintf(text, sizeof text, "%.0f", value);
  } else {
    std::snprintf(text, sizeof text, "%.6g", value);
  }
  return text;
}

}  // namespace seatwatch::page
