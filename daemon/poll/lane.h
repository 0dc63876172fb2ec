#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "checks/check.h"
#include "config/config.h"
#include "db/conninfo.h"

namespace seatwatch::poll {

// The daemon runs its checks in lanes: each lane is a poller with its own
// thread and database session, so that a long poll in one (the booking pack
// at millions of seats) cannot delay the other. kChecks runs every check but
// the locks check; kLocks runs the locks check alone. `--once` runs every
// check in one kChecks poller.
enum class Lane { kChecks, kLocks };

// What a lane's watchdog allows past a statement's own statement_timeout
// before it cancels the statement and drops the connection.
constexpr std::chrono::seconds kWatchdogMargin{2};

// "checks" or "locks", for logs.
std::string LaneName(Lane lane);

// The lane a check belongs to in the daemon.
Lane LaneOf(const checks::Check& check);

// Moves the checks of `lane` out of `checks`, keeping their order.
std::vector<std::unique_ptr<checks::Check>> TakeLane(
    std::vector<std::unique_ptr<checks::Check>>& checks, Lane lane);

// The connection settings of a lane's session. kChecks: [database] as is.
// kLocks: application_name suffixed "-locks" and [locks] statement_timeout,
// so that its transactions need no SET LOCAL. Both read-only, both with
// [database] lock_timeout.
db::SessionSettings LaneSessionSettings(const config::Config& config, Lane lane);

// The DSN a lane connects with: kChecks [checks] dsn (else [database] dsn),
// which may be a standby; kLocks always [database] dsn.
const std::string& LaneDsn(const config::Config& config, Lane lane);

}  // namespace seatwatch::poll
