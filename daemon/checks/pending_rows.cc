#include "checks/pending_rows.h"

namespace seatwatch::checks {

bool PendingRows::Accept(const changes::ChangeBatch& batch) {
  bool continued = batch.feed_up && have_generation_ && batch.generation == generation_;
  if (!continued) {
    pending_.clear();
    have_generation_ = batch.feed_up;
    generation_ = batch.generation;
  }
  for (const auto& transaction : batch.transactions) {
    Changed changed;
    changed.complete = transaction.identities_complete && batch.unmappable.empty();
    for (const auto& [table, keys] : transaction.keys) {
      if (tables_.count(table) == 0) continue;
      changed.keys.insert(keys.begin(), keys.end());
      auto it = transaction.identities.find(table);
      if (it == transaction.identities.end()) {
        changed.complete = changed.complete && keys.empty();
        continue;
      }
      changed.identities.emplace(table, it->second);
      // Every key the table's changes gave must have its rows named.
      for (const auto& key : keys) {
        changed.complete = changed.complete && it->second.by_key.count(key) > 0;
      }
    }
    if (changed.keys.empty()) continue;
    Changed& kept = pending_[transaction.xid];
    kept.complete = kept.complete && changed.complete;
    kept.keys.insert(changed.keys.begin(), changed.keys.end());
    for (auto& [table, identities] : changed.identities) {
      auto [at, added] = kept.identities.emplace(table, identities);
      if (added) continue;
      if (at->second.columns != identities.columns) kept.complete = false;
      for (auto& [key, rows] : identities.by_key) at->second.by_key[key].insert(rows.begin(), rows.end());
    }
  }
  return continued && batch.unmappable.empty();
}

PendingRows::Dirty PendingRows::Of(const std::vector<std::uint32_t>& visible) const {
  Dirty dirty;
  for (auto xid : visible) {
    auto it = pending_.find(xid);
    if (it == pending_.end()) continue;
    const Changed& changed = it->second;
    if (!changed.complete) {
      dirty.unknown.insert(changed.keys.begin(), changed.keys.end());
      continue;
    }
    for (const auto& [table, identities] : changed.identities) {
      auto [columns, added] = dirty.columns.emplace(table, identities.columns);
      if (!added && columns->second != identities.columns) {
        // Rows named by two identities of one table: neither can be read.
        for (const auto& [key, rows] : identities.by_key) dirty.unknown.insert(key);
        continue;
      }
      for (const auto& [key, rows] : identities.by_key) {
        dirty.rows[key][table].insert(rows.begin(), rows.end());
      }
    }
  }
  return dirty;
}

void PendingRows::Settle(const std::vector<std::uint32_t>& visible) {
  for (auto xid : visible) pending_.erase(xid);
}

}  // namespace seatwatch::checks
