#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace seatwatch::cli {

struct Args {
  std::optional<std::string> config_path;
  bool check_config = false;
  bool once = false;
  // --print-sql [NAME]: "" for every entry, else a check or an invariant.
  std::optional<std::string> print_sql;
  // --print-setup: the DBA's script for the change feed on the config's tables.
  bool print_setup = false;
  std::optional<std::string> listen;
  std::optional<std::string> log_level;
  bool version = false;
  bool help = false;
};

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Accepts "--flag value" and "--flag=value". Throws UsageError.
Args ParseArgs(const std::vector<std::string>& argv);

std::string UsageText();

}  // namespace seatwatch::cli
