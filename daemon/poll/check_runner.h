#pragma once

#include <functional>
#include <vector>

#include <pqxx/connection>

#include "db/local_settings.h"
#include "db/query_cache.h"
#include "poll/scheduled_check.h"

namespace seatwatch::poll {

// How a check's transaction ended, for the poller's retry rule.
enum class RunOutcome {
  kRan,               // the check ran (succeeded or failed): recorded
  kLostBeforeStart,   // the connection was gone before BEGIN went through, so nothing
                      // of the check ran; recorded only if `may_retry` is false
  kRecoveryConflict,  // a standby cancelled the check (db::FailureReason::kRecoveryConflict)
                      // and it may run once more: the attempt is counted in its
                      // errors but not recorded as its result
};

// Runs one check in a short transaction of its own, committed as soon as the
// check is done, so the ACCESS SHARE locks it takes on the tables it reads
// are held no longer than it runs (a migration queues behind one monitoring
// statement, never behind a whole poll). Data checks (shares_snapshot) get
// REPEATABLE READ READ ONLY, so a check's own statements (its query and its
// detail queries) see one snapshot; the others READ COMMITTED READ ONLY.
// `wanted`: the timeouts the check runs with, SET LOCAL in one round trip
// after BEGIN whatever the connection options say (see db::LocalSettings), so
// that they hold through a transaction pooler too: BEGIN, SET LOCAL, the
// check's reads, COMMIT.
// `queries` lives for the whole poll: entries sharing one query and params
// cost one execution, the later ones reusing the rows of the first.
// Records the outcome, except a kLostBeforeStart when `may_retry`, and a
// recovery conflict when `may_retry_conflict` (counted in the check's errors
// and logged, returned as kRecoveryConflict): the caller reconnects if
// needed and runs the check again.
RunOutcome RunCheckTransaction(pqxx::connection& connection, ScheduledCheck& entry,
                               db::QueryCache& queries, const db::LocalSettings& wanted,
                               bool may_retry, bool may_retry_conflict);

// Marks checks that could not run at all (no connection) as failed.
void FailAll(const std::vector<ScheduledCheck*>& group, db::FailureReason reason,
             const std::string& message);

}  // namespace seatwatch::poll
