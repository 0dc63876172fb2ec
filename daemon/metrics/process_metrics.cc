#include "metrics/process_metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <vector>

#include "metrics/family.h"
#include "metrics/family_text.h"

namespace seatwatch::metrics {

namespace {

std::string ReadAll(const char* path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

double BootTime() {
  std::istringstream in(ReadAll("/proc/stat"));
  std::string key;
  while (in >> key) {
    if (key == "btime") {
      double value = 0;
      in >> value;
      return value;
    }
    std::string rest;
    std::getline(in, rest);
  }
  return 0;
}

double CountOpenFds() {
  DIR* dir = opendir("/proc/self/fd");
  if (!dir) return 0;
  double count = 0;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(dir);
  return count - 1;  // the descriptor opendir itself holds
}

}  // namespace

ProcessStats ParseProcStat(const std::string& stat, double ticks_per_second, double page_size,
                           double boot_time_unix) {
  ProcessStats stats;
  // The command name (field 2) is in parentheses and may contain spaces.
  auto close = stat.rfind(')');
  if (close == std::string::npos) return stats;
  std::istringstream in(stat.substr(close + 2));
  std::vector<std::string> fields;  // fields[0] is field 3 (state)
  std::string field;
  while (in >> field) fields.push_back(field);
  auto at = [&](size_t number) -> double {  // number as in proc(5)
    size_t index = number - 3;
    return index < fields.size() ? std::stod(fields[index]) : 0.0;
  };
  stats.cpu_seconds = (at(14) + at(15)) / ticks_per_second;
  stats.start_time_unix = boot_time_unix + at(22) / ticks_per_second;
  stats.virtual_bytes = at(23);
  stats.resident_bytes = at(24) * page_size;
  return stats;
}

ProcessStats ReadProcessStats() {
  static const double kBootTime = BootTime();
  ProcessStats stats =
      ParseProcStat(ReadAll("/proc/self/stat"), static_cast<double>(sysconf(_SC_CLK_TCK)),
                    static_cast<double>(sysconf(_SC_PAGESIZE)), kBootTime);
  stats.open_fds = CountOpenFds();
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) stats.max_fds = static_cast<double>(limit.rlim_cur);
  return stats;
}

std::string RenderProcessMetrics(const ProcessStats& stats) {
  std::vector<prometheus::MetricFamily> families;
  auto cpu = CounterFamily("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.");
  AddCounter(cpu, {}, stats.cpu_seconds);
  families.push_back(std::move(cpu));
  families.push_back(SingleGauge("process_resident_memory_bytes", "Resident memory size in bytes.",
                                 stats.resident_bytes));
  families.push_back(SingleGauge("process_virtual_memory_bytes", "Virtual memory size in bytes.",
                                 stats.virtual_bytes));
  families.push_back(SingleGauge("process_start_time_seconds",
                                 "Start time of the process since unix epoch in seconds.",
                                 stats.start_time_unix));
  families.push_back(SingleGauge("process_open_fds", "Number of open file descriptors.",
                                 stats.open_fds));
  families.push_back(SingleGauge("process_max_fds", "Maximum number of open file descriptors.",
                                 stats.max_fds));
  return RenderText(std::move(families));
}

}  // namespace seatwatch::metrics
