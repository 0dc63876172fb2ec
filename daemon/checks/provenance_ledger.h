#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "changes/change_batch.h"
#include "metrics/provenance.h"

namespace seatwatch::checks {

// Provenance for one incremental check: per key, the commits the change
// feed handed over that changed the key's rows since a run last found the
// key clean (in every invariant of the check), so that a key that turns
// violated can name the transactions that did it.
//
// Bounded: a ring of the newest kPerKey commits per key, at most kMaxCommits
// over all keys (the oldest evicted first); each commit keeps at most
// Provenance::kMaxChangesPerKey changes of its key. What is dropped before
// its key is clean is counted per key in Provenance::earlier_omitted; what
// the overall cap evicts also in evicted() (a ring that turns over is a hot
// key, not memory pressure).
// Single-threaded (the poller's thread).
class ProvenanceLedger {
 public:
  static constexpr std::size_t kPerKey = 16;
  static constexpr std::size_t kMaxCommits = 20000;

  // `tables`: the check's watched tables, as the feed names them.
  explicit ProvenanceLedger(std::set<std::string> tables);

  // The committed transactions of a batch, in commit order.
  void Record(const std::vector<changes::TransactionChanges>& transactions);
  // What the ledger holds for `key` (nullptr: nothing). The same object
  // until the key's commits change.
  std::shared_ptr<const metrics::Provenance> Of(const std::string& key) const;
  // After a successful run: every key not in `violated` is clean, and its
  // commits are dropped, but those of xids still `pending` (the run's
  // snapshot did not see them yet).
  void Settle(const std::set<std::string>& violated, const std::set<std::uint32_t>& pending);

  std::size_t commits() const { return commits_; }
  std::size_t keys() const { return by_key_.size(); }
  std::uint64_t evicted() const { return evicted_; }

 private:
  struct Entry {
    std::uint64_t sequence = 0;
    std::shared_ptr<const metrics::CommitProvenance> commit;
  };
  struct KeyLog {
    std::vector<Entry> commits;  // oldest first; at most kPerKey
    std::uint64_t omitted = 0;
    mutable std::shared_ptr<const metrics::Provenance> built;
  };

  void Add(const std::string& key, std::shared_ptr<const metrics::CommitProvenance> commit);
  void EvictOverall();

  const std::set<std::string> tables_;
  std::map<std::string, KeyLog> by_key_;
  // (sequence, key) as added: the overall order of eviction. An entry whose
  // commit already left its key (ring, settled) is skipped.
  std::deque<std::pair<std::uint64_t, std::string>> order_;
  std::uint64_t next_sequence_ = 0;
  std::size_t commits_ = 0;
  std::uint64_t evicted_ = 0;
};

}  // namespace seatwatch::checks
