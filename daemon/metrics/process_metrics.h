#pragma once

#include <string>

namespace seatwatch::metrics {

struct ProcessStats {
  double cpu_seconds = 0;
  double resident_bytes = 0;
  double virtual_bytes = 0;
  double start_time_unix = 0;
  double open_fds = 0;
  double max_fds = 0;
};

// Parses the contents of /proc/self/stat; `ticks_per_second` and `page_size`
// from sysconf, `boot_time_unix` from /proc/stat's btime. Pure.
ProcessStats ParseProcStat(const std::string& stat, double ticks_per_second, double page_size,
                           double boot_time_unix);

// Reads /proc for this process. Cheap (a few small reads, no database).
ProcessStats ReadProcessStats();

// The standard process_* families in text format.
std::string RenderProcessMetrics(const ProcessStats& stats);

}  // namespace seatwatch::metrics
