#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "changes/change_batch.h"
#include "checks/check.h"
#include "checks/incremental_rows.h"
#include "checks/pending_rows.h"
#include "checks/provenance_ledger.h"
#include "checks/query_entry.h"
#include "checks/row_ledger.h"
#include "config/config.h"
#include "metrics/incremental_status.h"

namespace seatwatch::checks {

// [changes] as an incremental entry needs it.
struct IncrementalSettings {
  Millis interval{1000};             // [changes] interval
  Millis full_pass_interval{3600000};  // [changes] full_pass_interval
};

// The rows of an incremental [[invariant]] or [[metric]] entry for one run,
// in the check's own REPEATABLE READ READ ONLY transaction: a full pass of
// the entry's SQL, or a recheck of the dirty keys with its scoped_sql merged
// into the last result (see IncrementalRows for when which). Every
// statement goes through the poll's QueryCache, tagged with the pending
// xids the run's snapshot sees, so entries sharing a query share results
// only when they agree on what that snapshot saw:
//  - visibility: which pending 32-bit xids the snapshot cannot see yet
//    (widened to xid8 against the snapshot's xmax); those stay pending;
//  - readiness: before a full pass seeds a new generation of the feed,
//    whether every creation xid has ended and every committed one is
//    visible (else it stays unseeded, in full-pass mode, and tries again
//    next run);
//  - the entry's SQL (full) or scoped_sql with $1 = the dirty keys as a
//    text[] literal, then `params`;
//  - after a backstop's full pass, the WAL insert position, so that the
//    state it replaced can be audited against the feed (BackstopAudit): a
//    confirmed difference is a mismatch, counted per invariant and logged
//    with the key and both values; the full pass has already corrected it.
// Single-threaded (the poller's thread).
class IncrementalSource {
 public:
  static const char* const kVisibilitySql;
  static const char* const kReadinessSql;
  // Read after a backstop's full pass, in its transaction: an upper bound of
  // the commit of every transaction its snapshot sees.
  static const char* const kWalPositionSql;

  IncrementalSource(const config::QueryConfig& entry, IncrementalSettings settings);

  void AcceptChanges(const changes::ChangeBatch& batch, changes::ResyncReason generation_reason);
  // The rows to judge, bound to the entry's columns. Throws like
  // FetchEntryRows (EntryMismatch also for a scoped_sql that does not fit).
  BoundRows Fetch(CheckContext& context);
  // After a successful run built its results from Fetch's rows: gives each
  // violated key the commits that changed it since it was last clean, then
  // forgets those of the keys found clean. Nothing without a ledger (an
  // entry with no invariants, or whose key column is not one of its labels).
  void Attribute(std::vector<metrics::InvariantResult>& invariants);

  // [changes] interval while the feed is up and this entry is seeded in its
  // generation; `normal` otherwise.
  Millis Interval(Millis normal) const;
  metrics::IncrementalStatus Status() const;
  const IncrementalRows& state() const { return *rows_; }

  // On reload: keeps `previous`'s state if it ran the same queries with the
  // same keys (true), else starts over (false).
  bool TakeStateFrom(IncrementalSource& previous);

 private:
  std::vector<std::uint32_t> Visible(CheckContext& context,
                                     const std::vector<std::uint32_t>& pending) const;
  bool Ready(CheckContext& context, const std::vector<std::uint64_t>& creation_xids) const;
  BoundRows FullPass(CheckContext& context, const RunPlan& plan,
                     const std::vector<std::uint32_t>& visible, double now_unix);
  void Recheck(CheckContext& context, const std::set<std::string>& keys,
               const std::vector<std::uint32_t>& visible, double now_unix);
  // The keys of `keys` the row ledger follows this cycle, with the rows to
  // read for them; the others are read whole.
  std::set<std::string> Followed(const std::set<std::string>& keys,
                                 const std::vector<std::uint32_t>& visible, double now_unix,
                                 RowLedger::RowSet& to_read);
  // Reads the hot keys of `exact` whole into the row ledger, in the
  // recheck's snapshot: keys read whole kHotReads times within kHotSeconds.
  // `tag`: SeenTag of the recheck's visible xids.
  void SeedHot(CheckContext& context, const std::set<std::string>& exact,
               const std::string& tag, double now_unix);
  BoundRows Bound() const;
  // Counts and logs the backstop differences the feed has confirmed.
  void ReportMismatches();
  [[noreturn]] void Mismatch(const std::string& key, const std::exception& e) const;

  config::QueryConfig entry_;
  IncrementalSettings settings_;
  // The key column is one of the labels: no two keys share a series, so
  // violations can name their commits (the ledger) and the rows can be
  // handed over by key (BoundRows::keyed).
  const bool key_is_label_;
  std::unique_ptr<IncrementalRows> rows_;
  std::unique_ptr<ProvenanceLedger> ledger_;
  // Declared checks whose rows are sums over rows (declare::RowTerms): the
  // rows of hot keys, followed row by row. Null otherwise.
  // A key read whole this many times within kHotSeconds is followed: its
  // first reading row by row costs several whole readings, which a key
  // read now and then (an admin fix, an injection) would never pay back.
  static constexpr int kHotReads = 5;
  static constexpr double kHotSeconds = 60;
  std::unique_ptr<PendingRows> pending_rows_;
  std::unique_ptr<RowLedger> row_ledger_;
  // Key -> how often a recheck read it whole since when (within kHotSeconds).
  std::map<std::string, std::pair<int, double>> read_whole_;
  std::uint64_t rechecked_by_rows_ = 0;
  std::uint64_t rechecked_whole_ = 0;
};

}  // namespace seatwatch::checks
