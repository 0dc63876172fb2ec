#pragma once

#include <string>

#include "config/config.h"

namespace seatwatch::config {

// Reads the file, parses it, then reads every SQL and TLS file it names. Throws
// ConfigError (with file, line and key) for anything wrong.
Config LoadConfig(const std::string& path);

// Reads the SQL files named by an already parsed config.
void LoadSqlFiles(Config& config);

// Reads the TLS certificate, key and client CA files into the config's PEM
// fields and checks that they parse and that the key matches.
void LoadHttpFiles(Config& config);

// Removes trailing whitespace and semicolons so the text can be wrapped in a
// subquery.
std::string TrimSql(std::string sql);

}  // namespace seatwatch::config
