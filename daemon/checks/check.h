#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <pqxx/transaction_base>

#include "changes/change_batch.h"
#include "db/lazy_transaction.h"
#include "db/query_cache.h"
#include "metrics/check_output.h"
#include "metrics/incremental_status.h"

namespace seatwatch::checks {

using Millis = std::chrono::milliseconds;

struct CheckContext {
  // The check's transaction, begun by its first statement (Get()).
  db::LazyTransaction& tx;
  db::QueryCache& queries;
  std::chrono::system_clock::time_point now;
};

// One kind of check. A poller owns the instances and runs them on its one
// thread, so a check may keep state between runs (counters, episodes) without
// locking. Run() throws on failure; the poller counts and logs it.
class Check {
 public:
  virtual ~Check() = default;

  virtual const std::string& name() const = 0;
  virtual Millis interval() const = 0;

  // Checks that judge data (invariants, inventory) share one REPEATABLE READ
  // READ ONLY transaction per poll so that they see one snapshot. A check that
  // returns false gets a short READ COMMITTED READ ONLY transaction of its own.
  virtual bool shares_snapshot() const { return true; }
  // A statement_timeout for that own transaction; nullopt keeps the session's.
  virtual std::optional<Millis> statement_timeout() const { return std::nullopt; }

  // In the daemon, a check that must keep its cadence whatever the others
  // cost gets a poller thread and database session of its own (the locks
  // lane, see poll/lane.h).
  virtual bool own_session() const { return false; }

  // The invariants this check judges (for status "unknown" while it fails).
  virtual std::vector<std::string> invariants() const { return {}; }
  // Each of invariants()'s help text, as configured: what on-call reads in
  // an alert (seatwatch_invariant_info).
  virtual std::map<std::string, std::string> invariant_help() const { return {}; }

  virtual metrics::CheckOutput Run(CheckContext& context) = 0;

  // Incremental checks ([[invariant]]/[[metric]] with scoped_sql while
  // [changes] is enabled): before a poll in which one is due, the poller
  // drains the change feed once and hands the batch to every check that
  // wants changes (due or not: they accumulate), with the reason the feed's
  // current generation began. Checks never see where the keys came from.
  virtual bool wants_changes() const { return false; }
  virtual void AcceptChanges(const changes::ChangeBatch& batch,
                             changes::ResyncReason generation_reason) {
    (void)batch;
    (void)generation_reason;
  }
  // Mode, dirty keys and full passes, read by the poller after every run.
  virtual std::optional<metrics::IncrementalStatus> incremental_status() const {
    return std::nullopt;
  }

  // On a config reload the poller builds new checks; a check with the same
  // name as one it replaces is handed the old instance here, so that state
  // kept across runs (episode counters, histograms) survives. Default: none.
  virtual void TakeStateFrom(Check& previous) { (void)previous; }
};

}  // namespace seatwatch::checks
