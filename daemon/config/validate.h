#pragma once

#include "config/config.h"

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

// `[changes] enabled = true` needs an entry that reads the feed: without one
// the slot would pin WAL on the primary for nothing. (An incremental entry
// with the feed off is fine: it runs full passes.)
void RequireChangesConsumer(const Config& config);

}  // namespace seatwatch::config
