#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "changes/change_batch.h"
#include "checks/backstop_audit.h"
#include "db/rows.h"
#include "metrics/incremental_status.h"

namespace seatwatch::checks {

// Why an incremental check read everything again, for
// seatwatch_full_passes_total{reason}.
// kCoverage: the publication's coverage of the watched tables changed (while
// it is not whole, and the pass that seeds the slot made once it is again).
enum class FullPassReason {
  kStartup,
  kBackstop,
  kResync,
  kUnmappable,
  kFeedDown,
  kDrainCost,
  kCoverage
};
inline constexpr FullPassReason kAllFullPassReasons[] = {
    FullPassReason::kStartup,   FullPassReason::kBackstop,  FullPassReason::kResync,
    FullPassReason::kUnmappable, FullPassReason::kFeedDown, FullPassReason::kDrainCost,
    FullPassReason::kCoverage};
const char* FullPassReasonLabel(FullPassReason reason);

// The rows of a recheck (or of a full pass) do not fit the entry: no key
// column, a column of the full result missing, rows of keys not asked for.
class IncrementalMismatch : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What the next run of an incremental check has to do.
struct RunPlan {
  bool full = true;
  FullPassReason reason = FullPassReason::kStartup;  // when full
  // Pending 32-bit xids whose visibility the run's snapshot must settle
  // first (sorted): only the visible ones are done with.
  std::vector<std::uint32_t> pending_xids;
  // A full pass that seeds the feed's current generation if the readiness
  // query finds every committed creation xid visible.
  bool seeds = false;
  std::vector<std::uint64_t> creation_xids;
};

// The state of one incremental check between runs, without any database:
//  - its last result, indexed by the key column, which a full pass replaces
//    and a recheck replaces key by key (a key with no rows now is clean);
//  - the pending bookkeeping: xid -> keys it changed (from the feed), keys
//    carried over from a failed recheck, each key's next expiry (from
//    expiry_column): a key stays dirty until a recheck that saw it succeeds;
//  - the feed's generation it is seeded in, and why a full pass is due;
//  - the audit of its backstops (BackstopAudit): the keys a backstop full
//    pass found different from the state it replaced, until the feed
//    explains or confirms them.
// Single-threaded (the poller's thread).
class IncrementalRows {
 public:
  using Row = std::vector<db::Rows::Cell>;
  // A key whose next expiry is this close to the run's clock is left out of
  // a backstop's comparison: the database's now() may be that far ahead of
  // ours, and the recheck it was due would have read it anyway.
  static constexpr double kExpiryMarginSeconds = 5;

  // `tables`: the entry's watched tables as the feed names them.
  IncrementalRows(std::string key_column, std::string expiry_column,
                  std::set<std::string> tables, std::chrono::milliseconds full_pass_interval);

  // The last result. ApplyFull throws IncrementalMismatch without the key
  // column (or the expiry column, when one is configured), db::DataError
  // (bad_value) for an expiry that is not a number; ApplyRecheck throws
  // IncrementalMismatch for a missing column or a row of a key not in
  // `keys`. Both leave the state as it was when they throw.
  // With `backstop_lsn` (a backstop full pass, the WAL insert position read
  // after it), the keys whose rows differ from the state it replaces are
  // suspected, less those the feed already knows changed (pending, carried,
  // expiring by `now_unix` + kExpiryMarginSeconds).
  void ApplyFull(db::Rows rows, std::optional<std::uint64_t> backstop_lsn = std::nullopt,
                 double now_unix = 0);
  void ApplyRecheck(const std::set<std::string>& keys, const db::Rows& rows);
  bool has_result() const { return has_result_; }
  // Rows without a key first, then by key (text order), each key's rows in
  // the order its query returned them. Rebuilt only after a change.
  std::shared_ptr<const db::Rows> rows() const;
  std::size_t key_count() const { return by_key_.size(); }
  // The last result as kept: its columns, rows without a key, rows by key.
  const std::vector<std::string>& columns() const { return columns_; }
  const std::vector<Row>& keyless() const { return keyless_; }
  const std::map<std::string, std::vector<Row>>& by_key() const { return by_key_; }
  std::size_t row_count() const { return row_count_; }

  // The keys whose rows differ from what they were at the last call, for a
  // check that rebuilds what it publishes key by key (a key gone is among
  // them); `all` after a full pass, which replaced every key, and before
  // the first call.
  struct ChangedKeys {
    bool all = true;
    std::set<std::string> keys;
  };
  ChangedKeys TakeChangedKeys();

  // From the poller, between runs.
  void AcceptChanges(const changes::ChangeBatch& batch, changes::ResyncReason generation_reason);
  // The backstop differences the feed has confirmed since the last call:
  // mismatches, for the caller to judge per invariant, count and log.
  std::vector<KeyDifference> TakeMismatches();
  void CountMismatch(const std::string& invariant, std::uint64_t count = 1) {
    mismatches_[invariant] += count;
  }
  std::size_t suspected_keys() const { return audit_.suspects(); }
  // Differing keys a backstop could not hold (past BackstopAudit's cap).
  std::uint64_t unaudited_keys() const { return audit_.dropped(); }

  RunPlan Plan(double now_unix) const;
  // The keys an incremental run rechecks, given the pending xids its
  // snapshot sees: their keys, the carried keys, the keys whose expiry has
  // passed.
  std::set<std::string> DirtyKeys(const std::vector<std::uint32_t>& visible,
                                  double now_unix) const;
  // After a successful full pass (ApplyFull done): the visible pending xids
  // are settled, carried keys dropped; the generation is seeded if
  // plan.seeds and `ready`.
  void FullPassDone(const RunPlan& plan, const std::vector<std::uint32_t>& visible, bool ready,
                    double now_unix, double seconds);
  // After a successful recheck of `keys` (ApplyRecheck done), or a cycle
  // with no key dirty (`keys` empty).
  void RecheckDone(const std::set<std::string>& keys, const std::vector<std::uint32_t>& visible);
  // The recheck failed: its keys stay dirty (carried), whichever xid or
  // expiry made them so.
  void RecheckFailed(const std::set<std::string>& keys, const std::vector<std::uint32_t>& visible);

  // A reload may change [changes] full_pass_interval and keep the state.
  void set_full_pass_interval(std::chrono::milliseconds interval) {
    full_pass_interval_seconds_ = std::chrono::duration<double>(interval).count();
  }

  bool feed_up() const { return feed_up_; }
  bool seeded() const { return feed_up_ && seeded_; }
  std::size_t pending_transactions() const { return pending_.size(); }
  std::set<std::uint32_t> pending_xids() const;
  const std::set<std::string>& carried() const { return carried_; }
  // A key's next expiry (unix seconds), or 0 when it has none.
  double next_expiry(const std::string& key) const;
  metrics::IncrementalStatus Status() const;

 private:
  void SettleVisible(const std::vector<std::uint32_t>& visible);
  std::map<std::string, double> Expiries(const std::map<std::string, std::vector<Row>>& by_key,
                                         int expiry_index) const;

  const std::string key_column_;
  const std::string expiry_column_;
  const std::set<std::string> tables_;
  double full_pass_interval_seconds_;

  // The last result.
  bool has_result_ = false;
  std::vector<std::string> columns_;
  int key_index_ = -1;
  int expiry_index_ = -1;
  std::vector<Row> keyless_;
  std::map<std::string, std::vector<Row>> by_key_;
  std::map<std::string, double> expiry_;  // keys with a next expiry
  std::size_t row_count_ = 0;
  mutable std::shared_ptr<const db::Rows> merged_;
  ChangedKeys changed_;

  // The feed.
  bool feed_up_ = false;
  bool have_generation_ = false;
  std::uint64_t generation_ = 0;
  changes::ResyncReason generation_reason_ = changes::ResyncReason::kStartup;
  std::vector<std::uint64_t> creation_xids_;
  bool seeded_ = false;       // a full pass seeded generation_
  bool ever_seeded_ = false;  // some generation was seeded once
  std::map<std::uint32_t, std::set<std::string>> pending_;  // xid -> keys
  std::set<std::string> carried_;
  // Transactions of a batch with an unmappable change: a full pass is due
  // until one has seen all of them.
  std::set<std::uint32_t> unmappable_xids_;
  bool unmappable_ = false;
  // The feed's ChangeBatch::coverage_lost while it is down for that.
  std::string coverage_lost_;

  BackstopAudit audit_;
  std::vector<KeyDifference> confirmed_;

  // Counters.
  std::map<std::string, std::uint64_t> mismatches_;  // by invariant
  std::map<FullPassReason, std::uint64_t> full_passes_;
  double last_full_pass_unix_ = 0;
  double last_full_pass_seconds_ = 0;
  std::uint64_t last_dirty_keys_ = 0;
};

}  // namespace seatwatch::checks
