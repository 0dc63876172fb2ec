#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "db/rows.h"

namespace seatwatch::checks {

// One key whose rows in the incremental state differ from a backstop full
// pass's: the state the rechecks built, and what the full pass read.
struct KeyDifference {
  std::string key;
  std::vector<std::string> columns;
  std::vector<std::vector<db::Rows::Cell>> incremental;
  std::vector<std::vector<db::Rows::Cell>> full;
};

// The keys whose rows differ between two results indexed by key (rows
// compared as a multiset: the order a query returns a key's rows in is not
// part of its result), less `excluded`. Keys with no rows on one side count
// as "no rows". Sorted by key.
std::vector<KeyDifference> DifferingKeys(
    const std::vector<std::string>& columns,
    const std::map<std::string, std::vector<std::vector<db::Rows::Cell>>>& incremental,
    const std::map<std::string, std::vector<std::vector<db::Rows::Cell>>>& full,
    const std::set<std::string>& excluded);

// The feed checking itself. Each backstop full pass is compared key by key
// with the incremental state it replaces (the full pass's result stands: it
// corrects the state at once). A difference is not a defect yet: the full
// pass's snapshot may see transactions that committed after the last drain,
// which the feed will hand over later. So each differing key is held as a
// suspect with the WAL insert position read after the full pass, an upper
// bound of every commit its snapshot saw, and:
//  - a later batch with a transaction that changed the key explains it
//    (the difference may be that transaction's; the next recheck or
//    backstop settles the key);
//  - a batch that cannot be mapped to keys, a new generation or the feed
//    going down forgets every suspect (nothing can confirm it any more);
//  - once a batch's complete_through_lsn reaches the position, everything
//    the full pass saw has been handed over: what is left is a mismatch,
//    the feed or the entry's scoped SQL missed a change.
// At most kMaxSuspects keys are held; the rest are counted (dropped()) and
// not reported. Single-threaded (the poller's thread).
class BackstopAudit {
 public:
  static constexpr std::size_t kMaxSuspects = 1000;

  // The differences of one backstop, whose WAL insert position was `lsn`.
  // Replaces the suspects of an earlier backstop still unconfirmed: this
  // pass compared against the same keys again.
  void Suspect(std::vector<KeyDifference> differences, std::uint64_t lsn);
  // A transaction handed over after the backstop changed these keys.
  void Explain(const std::set<std::string>& keys);
  // The suspects confirmed by a batch complete through `complete_through`
  // (0: unknown, confirms nothing); they are no longer held.
  std::vector<KeyDifference> Confirm(std::uint64_t complete_through);
  void Forget();

  std::size_t suspects() const { return suspects_.size(); }
  std::uint64_t dropped() const { return dropped_; }

 private:
  std::map<std::string, KeyDifference> suspects_;
  std::uint64_t lsn_ = 0;
  std::uint64_t dropped_ = 0;
};

}  // namespace seatwatch::checks
