#pragma once

#include <string>

#include "config/config.h"
#include "db/conninfo.h"

namespace seatwatch::config {

// Checks of a whole config that ParseConfig leaves to the callers that run
// one (the daemon's start, --check-config, --once and a SIGHUP): each throws
// ConfigError naming file, line and key.

// A file that configures nothing to run (an empty or truncated file, or one
// with only [database] and [http]) is refused unless it says
// `allow_no_checks = true`: on SIGHUP it would silently drop every check.
// The lock check being on by default does not count; a [locks] table does.
void RequireChecks(const Config& config);

// The DSN as the daemon will use it: parsed by libpq with the session
// settings applied (db::BuildConninfo), so that what the daemon would refuse
// at start is refused by --check-config too. `where` names the DSN's source.
void RequireUsableDsn(const DatabaseConfig& database, const Location& where);

// The same for [changes] dsn (or SEATWATCH_CHANGES_DSN), as the slot session
// will use it; nothing to check when it is empty ([database] dsn is used).
void RequireUsableChangesDsn(const Config& config, const Location& where);

// The same for [checks] dsn (or SEATWATCH_CHECKS_DSN), as the checks lane's
// session will use it; nothing to check when it is empty ([database] dsn is
// used).
void RequireUsableChecksDsn(const Config& config, const Location& where);

// libpq's target_session_attrs of `dsn` as written (PQconninfoParse: a
// PGTARGETSESSIONATTRS default is not applied); empty when the DSN gives
// none or does not parse.
std::string TargetSessionAttrs(const std::string& dsn);

// `[changes] enabled = true` needs an entry that reads the feed: without one
// the slot would pin WAL on the primary for nothing. (An incremental entry
// with the feed off is fine: it runs full passes.)
void RequireChangesConsumer(const Config& config);

// The session settings of [database]: application_name and its timeouts.
db::SessionSettings SettingsOf(const DatabaseConfig& database);

}  // namespace seatwatch::config
