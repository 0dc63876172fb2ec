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

// A hand-written incremental [[invariant]] of the daemon tests: seats held
// per event. Its full pass, for a file "held.sql" beside the config:
inline constexpr const char* kHeldSeatsSql =
    "SELECT event_id, count(*) FILTER (WHERE status = 'held') AS held\n"
    "  FROM seats GROUP BY event_id\n";
// The entry's TOML up to its key and tables; the test appends its
// scoped_sql (and anything else).
inline constexpr const char* kHeldSeatsEntry =
    "[[invariant]]\n"
    "name = \"held_seats\"\n"
    "help = \"Seats held per event\"\n"
    "sql = \"held.sql\"\n"
    "labels = [\"event_id\"]\n"
    "value = \"held\"\n"
    "key = \"event_id\"\n"
    "tables = { seats = \"event_id\" }\n";

// Parses `toml` as if it were the file `path` and returns the ConfigError's
// message, or "(no error)".
std::string ConfigErrorOf(const std::string& toml, const std::string& path);

}  // namespace seatwatch::testing
