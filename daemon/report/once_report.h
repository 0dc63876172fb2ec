#pragma once

#include <string>
#include <vector>

#include "metrics/poll_state.h"

namespace seatwatch::report {

// The server one lane of --once connected to: its DSN as shown (masked) and
// whether the lane reached it.
struct OnceLane {
  std::string lane;  // "checks", "locks"
  std::string masked_dsn;
  bool reachable = false;
};

// The readable --once report: each invariant OK, VIOLATED or UNKNOWN with
// its offending keys and detail rows, each metric's rows, each failure with
// its reason, then each check's own section (the lock forest). Everything
// that came from the database is escaped for a terminal (see
// TerminalSafe): no control character of a row reaches the screen. Pure.
// Its head names each lane's DSN and server, `database (checks lane): ...`
// and `server (locks lane): primary`, or one `database:` and one `server:`
// line when every lane read the same DSN and the same server.
std::string FormatOnceReport(const metrics::PollState& state, const std::vector<OnceLane>& lanes);

// 3 database unreachable, 1 a violated invariant or a failed check, else 0.
int OnceExitCode(const metrics::PollState& state);

}  // namespace seatwatch::report
