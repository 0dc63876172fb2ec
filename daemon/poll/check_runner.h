#pragma once

#include <chrono>
#include <functional>
#include <vector>

#include <pqxx/connection>

#include "poll/scheduled_check.h"

namespace seatwatch::poll {

struct TransactionSettings {
  std::chrono::milliseconds statement_timeout{5000};
  std::chrono::milliseconds lock_timeout{100};
};

// Runs the checks together in one REPEATABLE READ READ ONLY transaction, each
// inside its own savepoint so that one failure (a timeout, an SQL error)
// leaves the others running on the same snapshot. Records every outcome.
// `stopping` is asked between checks: on shutdown the statement in flight
// finishes and the checks after it are not started.
void RunSnapshotGroup(pqxx::connection& connection, const std::vector<ScheduledCheck*>& group,
                      const TransactionSettings& settings,
                      const std::function<bool()>& stopping = [] { return false; });

// Runs one check in a short READ COMMITTED READ ONLY transaction of its own.
// `session`: the timeouts the session's connection options already set; the
// transaction SETs LOCAL only the ones the check wants different (a lock poll
// on the locks lane's session needs none: BEGIN, its read, COMMIT).
void RunOwnTransaction(pqxx::connection& connection, ScheduledCheck& entry,
                       const TransactionSettings& session);

// Marks checks that could not run at all (no connection) as failed.
void FailAll(const std::vector<ScheduledCheck*>& group, db::FailureReason reason,
             const std::string& message);

}  // namespace seatwatch::poll
