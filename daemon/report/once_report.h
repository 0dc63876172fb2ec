#pragma once

#include <string>

#include "metrics/poll_state.h"

namespace seatwatch::report {

// The readable --once report: each invariant OK, VIOLATED or UNKNOWN with
// its offending keys and detail rows, each metric's rows, each failure with
// its reason, then each check's own section (the lock forest). Everything
// that came from the database is escaped for a terminal (see
// TerminalSafe): no control character of a row reaches the screen. Pure.
std::string FormatOnceReport(const metrics::PollState& state, const std::string& masked_dsn);

// 3 database unreachable, 1 a violated invariant or a failed check, else 0.
int OnceExitCode(const metrics::PollState& state);

}  // namespace seatwatch::report
