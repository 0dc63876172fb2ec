#pragma once

#include <vector>

#include <prometheus/metric_family.h>

#include "locks/lock_poll.h"
#include "locks/wait_episodes.h"

namespace seatwatch::locks {

// The seatwatch_lock_*, seatwatch_transaction_oldest_seconds,
// seatwatch_sessions and pg_stat_database counter families of one poll. The
// gauges are exported with 0 when nothing waits, and the usual states with 0,
// so that dashboards and alerts always find their series. Labels carry states
// and relations only (bounded), never pids, queries or row keys. Pure.
std::vector<prometheus::MetricFamily> BuildLockFamilies(const LockPoll& poll,
                                                        const WaitEpisodes& episodes);

}  // namespace seatwatch::locks
