#pragma once

#include <string>

#include "config/config.h"

namespace seatwatch::app {

// Each returns the process exit code.

// --check-config: the config has parsed; if the database is reachable, each
// entry's SQL is also run with LIMIT 0 to prove its columns, and each
// incremental entry's scoped_sql is proved against its sql
// (checks::ProveScopedSql). 0 or 2.
int CheckConfigCommand(const config::Config& config);

// --print-sql: the SQL of every entry, or of the check or invariant `name`
// (empty: all), as the daemon runs it; no database. 0, or 2 for an unknown
// name.
int PrintSqlCommand(const config::Config& config, const std::string& name);

// --print-setup: changes::SetupScript of the config on stdout; no
// database. 0, or 2 when no entry is incremental (nothing to set up).
int PrintSetupCommand(const config::Config& config);

// --once: every check once, a report on stdout. 0, 1 or 3.
int OnceCommand(const config::Config& config, const std::string& version);

// The daemon: poller, HTTP server and housekeeping until SIGTERM/SIGINT;
// SIGHUP reloads `config_path`. 0 on a clean stop, 1 if it cannot start, 2
// when the database answers and proves a scoped_sql wrong (ScopedProofGate).
int DaemonCommand(config::Config config, const std::string& config_path,
                  const std::string& listen_override, const std::string& version);

}  // namespace seatwatch::app
