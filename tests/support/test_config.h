#pragma once

#include <string>

#include "config/config.h"

namespace seatwatch::testing {

// The shipped example config (config/seatwatch.toml) made runnable from a
// temp folder: query paths absolute, the poll interval shortened to
// `poll_interval`, the listen address set, and `extra` TOML appended. Returns
// the path of the written file.
std::string WriteShippedConfig(const std::string& dir, const std::string& poll_interval,
                               int listen_port, const std::string& extra = "");

// The same, parsed and loaded, with the DSN pointed at `dsn`.
config::Config LoadShippedConfig(const std::string& dsn, const std::string& poll_interval = "1s");

// A Config with only the given TOML body (queries resolved against the
// repository root) and the DSN set.
config::Config ConfigFromToml(const std::string& toml, const std::string& dsn);

// The shipped cleanup statement with a pg_sleep(`pause_seconds`) inside, so
// that a test can act while a batch is certainly running.
std::string SlowCleanupSql(const std::string& pause_seconds);

// Parses `toml` as if it were the file `path` and returns the ConfigError's
// message, or "(no error)".
std::string ConfigErrorOf(const std::string& toml, const std::string& path);

}  // namespace seatwatch::testing
