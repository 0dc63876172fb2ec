#pragma once

#include <string>

#include "locks/lock_poll.h"

namespace seatwatch::locks {

// The LOCKS section of `seatwatch --once`: a summary line and the forest
// drawn as an indented tree, e.g.
//
//   LOCKS
//     3 waiting, longest 12.0s, deepest chain 1, most behind one root 3
//     root pid 4242 idle in transaction 14.2s (psql postgres@local) xact 20.1s
//       holds up 3 (3 directly)
//       query: UPDATE seats SET ...
//       pid 4243 waits 12.0s transactionid ShareLock on seats seats(event_id=1, seat=A12) (...)
//
// Pure.
std::string LocksReport(const LockPoll& poll);

// Who a session is, as the report and the status page show it:
// "(psql postgres@local)", "(app user@10.0.0.7, autovacuum worker)". Pure.
std::string SessionWho(const SessionRow& session);

}  // namespace seatwatch::locks
