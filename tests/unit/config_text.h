#pragma once

// Config text parsed as the file /etc/seatwatch/seatwatch.toml, for the unit
// tests of config parsing: relative SQL paths resolve against /etc/seatwatch.
#include <string>

#include "config/config.h"
#include "config/parse.h"
#include "support/test_config.h"

namespace seatwatch::config {

inline constexpr const char* kPath = "/etc/seatwatch/seatwatch.toml";

inline Config ParseText(const std::string& toml) { return ParseConfig(toml, kPath); }

// The ConfigError's message, or "(no error)".
inline std::string ErrorOf(const std::string& toml) {
  return testing::ConfigErrorOf(toml, kPath);
}

}  // namespace seatwatch::config
