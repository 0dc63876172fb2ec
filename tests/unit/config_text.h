#pragma once

// Config text parsed as the file /etc/seatwatch/seatwatch.toml, for the unit
// tests of config parsing: relative SQL paths resolve against /etc/seatwatch.
#include <map>
#include <optional>
#include <string>

#include "config/config.h"
#include "config/overrides.h"
#include "config/parse.h"
#include "support/test_config.h"

namespace seatwatch::config {

inline constexpr const char* kPath = "/etc/seatwatch/seatwatch.toml";

inline Config ParseText(const std::string& toml) { return ParseConfig(toml, kPath); }

// The ConfigError's message, or "(no error)".
inline std::string ErrorOf(const std::string& toml) {
  return testing::ConfigErrorOf(toml, kPath);
}

// An environment of exactly `values`, for ApplyEnvironment.
inline EnvLookup Env(std::map<std::string, std::string> values) {
  return [values](const std::string& name) -> std::optional<std::string> {
    auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

}  // namespace seatwatch::config
