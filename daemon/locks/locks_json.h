#pragma once

#include <string>

#include "locks/lock_poll.h"

namespace seatwatch::locks {

// The document GET /api/locks serves: a summary, then the blocking forest
// (roots with their waiters nested below), the hot rows, wait cycles and
// waiters whose blocker ended. Query texts appear only as the session read
// returned them: normalized, raw or none, as [locks] show_query says. Pure.
std::string LocksJson(const LockPoll& poll);

}  // namespace seatwatch::locks
