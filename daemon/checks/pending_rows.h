#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "changes/change_batch.h"

namespace seatwatch::checks {

// Which rows each pending transaction changed in an entry's watched tables,
// by key and replica identity (the feed's TransactionChanges::identities),
// until a run's snapshot sees the transaction: what a RowLedger must read
// again for a key, or that it cannot know which rows changed (a
// transaction that did not name them all: every key it changed is
// unknown). Kept beside IncrementalRows' pending xids, settled with them,
// and forgotten with them on a new generation.
// Single-threaded (the poller's thread).
class PendingRows {
 public:
  using Identity = changes::TransactionChanges::Identity;
  // Table -> identities.
  using RowSet = std::map<std::string, std::set<Identity>>;

  explicit PendingRows(std::set<std::string> tables) : tables_(std::move(tables)) {}

  // Returns false when the batch breaks the line of changes (no slot, a
  // new one, a change that cannot be mapped): a ledger that follows rows
  // must then forget its keys.
  bool Accept(const changes::ChangeBatch& batch);

  struct Dirty {
    std::map<std::string, RowSet> rows;  // key -> its changed rows
    std::set<std::string> unknown;       // keys whose changed rows are not all known
    // Table -> the identity columns the transactions named rows by.
    std::map<std::string, std::vector<std::string>> columns;
  };
  // What the visible transactions changed.
  Dirty Of(const std::vector<std::uint32_t>& visible) const;
  void Settle(const std::vector<std::uint32_t>& visible);
  std::size_t transactions() const { return pending_.size(); }

 private:
  struct Changed {
    bool complete = true;
    std::map<std::string, changes::TransactionChanges::TableIdentities> identities;
    std::set<std::string> keys;
  };
  std::set<std::string> tables_;
  bool have_generation_ = false;
  std::uint64_t generation_ = 0;
  std::map<std::uint32_t, Changed> pending_;
};

}  // namespace seatwatch::checks
