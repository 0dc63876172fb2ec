#pragma once

#include <set>
#include <string>
#include <vector>

#include "checks/incremental_rows.h"

namespace seatwatch::checks {

// What a check publishes per key of an incremental entry (BoundRows::keyed),
// kept up to date by rebuilding only the keys whose rows changed: all of
// them after a full pass (or at first, or after Forget), else those the
// rechecks changed since. A key whose rebuild threw stays due, with the
// keys after it, so the next run throws again as a full render would: a
// bad row fails the check until it changes. Single-threaded (the poller's).
class KeyedRebuild {
 public:
  using Row = IncrementalRows::Row;

  // `update(key, rows)` for each key due (rows null: the key is gone);
  // after a walk over every key, `prune(by_key)` drops the keys not in it.
  template <typename Update, typename Prune>
  void Walk(IncrementalRows& state, Update update, Prune prune) {
    IncrementalRows::ChangedKeys changed = state.TakeChangedKeys();
    if (changed.all) {
      all_ = true;
      due_.clear();
    } else if (!all_) {
      due_.insert(changed.keys.begin(), changed.keys.end());
    }
    const auto& by_key = state.by_key();
    if (all_) {
      for (const auto& [key, rows] : by_key) update(key, &rows);
      prune(by_key);
      all_ = false;
      return;
    }
    while (!due_.empty()) {
      auto key = due_.begin();
      auto it = by_key.find(*key);
      update(*key, it == by_key.end() ? nullptr : &it->second);
      due_.erase(key);
    }
  }

  // The check published its rows otherwise (not keyed): the next walk
  // rebuilds every key.
  void Forget() {
    all_ = true;
    due_.clear();
  }

 private:
  bool all_ = true;
  std::set<std::string> due_;
};

// A key's rows as db::Rows with the entry's columns, for the pure mappers.
inline db::Rows KeyRows(const IncrementalRows& state, const std::vector<IncrementalRows::Row>& rows) {
  db::Rows out;
  out.columns = state.columns();
  out.values = rows;
  return out;
}

}  // namespace seatwatch::checks
