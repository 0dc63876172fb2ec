#pragma once

#include <string>
#include <string_view>

#include "config/config.h"

namespace seatwatch::config {

// Parses TOML text into a Config without touching the file system: SQL file
// paths are resolved against the folder of `path` but not read. Throws
// ConfigError naming file, line and key for syntax errors, unknown keys,
// wrong types, bad values and duplicate names.
Config ParseConfig(std::string_view toml_text, const std::string& path);

}  // namespace seatwatch::config
