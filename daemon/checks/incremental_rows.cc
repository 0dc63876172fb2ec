#include "checks/incremental_rows.h"

#include <algorithm>

#include "db/failure.h"
#include "metrics/row_mapping.h"

namespace seatwatch::checks {

const char* FullPassReasonLabel(FullPassReason reason) {
  switch (reason) {
    case FullPassReason::kStartup: return "startup";
    case FullPassReason::kBackstop: return "backstop";
    case FullPassReason::kResync: return "resync";
    case FullPassReason::kUnmappable: return "unmappable";
    case FullPassReason::kFeedDown: return "feed_down";
    case FullPassReason::kDrainCost: return "drain_cost";
    case FullPassReason::kCoverage: return "coverage";
  }
  return "unknown";
}

namespace {

// Why a new generation of the feed needs a full pass, once a generation was
// seeded before (the first one is always "startup").
FullPassReason ReasonOfGeneration(changes::ResyncReason reason) {
  switch (reason) {
    case changes::ResyncReason::kUnmappable: return FullPassReason::kUnmappable;
    case changes::ResyncReason::kDrainCost: return FullPassReason::kDrainCost;
    case changes::ResyncReason::kCoverage: return FullPassReason::kCoverage;
    default: return FullPassReason::kResync;
  }
}

}  // namespace

IncrementalRows::IncrementalRows(std::string key_column, std::string expiry_column,
                                 std::set<std::string> tables,
                                 std::chrono::milliseconds full_pass_interval)
    : key_column_(std::move(key_column)),
      expiry_column_(std::move(expiry_column)),
      tables_(std::move(tables)),
      full_pass_interval_seconds_(std::chrono::duration<double>(full_pass_interval).count()) {
  for (auto reason : kAllFullPassReasons) full_passes_[reason] = 0;
}

std::map<std::string, double> IncrementalRows::Expiries(
    const std::map<std::string, std::vector<Row>>& by_key, int expiry_index) const {
  std::map<std::string, double> out;
  if (expiry_index < 0) return out;
  for (const auto& [key, rows] : by_key) {
    for (const auto& row : rows) {
      const auto& cell = row[static_cast<std::size_t>(expiry_index)];
      if (!cell) continue;
      double at = 0;
      try {
        at = metrics::ParseNumber(*cell);
      } catch (const std::invalid_argument&) {
        throw db::DataError(db::FailureReason::kBadValue,
                            "expiry column " + expiry_column_ + " holds '" + *cell +
                                "', not unix seconds");
      }
      auto it = out.find(key);
      if (it == out.end() || at < it->second) out[key] = at;
    }
  }
  return out;
}

void IncrementalRows::ApplyFull(db::Rows rows, std::optional<std::uint64_t> backstop_lsn,
                                double now_unix) {
  int key_index = rows.ColumnIndex(key_column_);
  if (key_index < 0) {
    throw IncrementalMismatch("the query returns no key column " + key_column_);
  }
  int expiry_index = -1;
  if (!expiry_column_.empty()) {
    expiry_index = rows.ColumnIndex(expiry_column_);
    if (expiry_index < 0) {
      throw IncrementalMismatch("the query returns no expiry column " + expiry_column_);
    }
  }
  std::vector<Row> keyless;
  std::map<std::string, std::vector<Row>> by_key;
  for (auto& row : rows.values) {
    const auto& key = row[static_cast<std::size_t>(key_index)];
    if (key) {
      std::string value = *key;
      by_key[value].push_back(std::move(row));
    } else {
      keyless.push_back(std::move(row));
    }
  }
  std::map<std::string, double> expiry = Expiries(by_key, expiry_index);
  if (backstop_lsn && has_result_ && columns_ == rows.columns) {
    std::set<std::string> known(carried_);
    for (const auto& [xid, keys] : pending_) known.insert(keys.begin(), keys.end());
    for (const auto& [key, at] : expiry_) {
      if (at <= now_unix + kExpiryMarginSeconds) known.insert(key);
    }
    audit_.Suspect(DifferingKeys(columns_, by_key_, by_key, known), *backstop_lsn);
  }
  columns_ = std::move(rows.columns);
  key_index_ = key_index;
  expiry_index_ = expiry_index;
  keyless_ = std::move(keyless);
  by_key_ = std::move(by_key);
  expiry_ = std::move(expiry);
  has_result_ = true;
  row_count_ = rows.values.size();
  merged_.reset();
  changed_ = ChangedKeys{};
}

void IncrementalRows::ApplyRecheck(const std::set<std::string>& keys, const db::Rows& rows) {
  if (!has_result_) throw std::logic_error("a recheck before any full pass");
  // The recheck's columns by name, so a scoped query may order them its way.
  std::vector<std::size_t> from;
  for (const auto& column : columns_) {
    int index = rows.ColumnIndex(column);
    if (index < 0) throw IncrementalMismatch("the scoped query returns no column " + column);
    from.push_back(static_cast<std::size_t>(index));
  }
  std::map<std::string, std::vector<Row>> fresh;
  for (const auto& key : keys) fresh[key];  // a key without rows now is clean
  for (const auto& row : rows.values) {
    Row mapped;
    mapped.reserve(from.size());
    for (auto index : from) mapped.push_back(row[index]);
    const auto& key = mapped[static_cast<std::size_t>(key_index_)];
    if (!key || keys.count(*key) == 0) {
      throw IncrementalMismatch("the scoped query returned a row of " + key_column_ + " = " +
                                (key ? "'" + *key + "'" : std::string("NULL")) +
                                ", a key it was not asked for");
    }
    fresh[*key].push_back(std::move(mapped));
  }
  std::map<std::string, double> expiry = Expiries(fresh, expiry_index_);
  for (auto& [key, key_rows] : fresh) {
    expiry_.erase(key);
    auto it = by_key_.find(key);
    if (it == by_key_.end() ? key_rows.empty() : it->second == key_rows) continue;
    if (!changed_.all) changed_.keys.insert(key);
    merged_.reset();
    if (it != by_key_.end()) row_count_ -= it->second.size();
    row_count_ += key_rows.size();
    if (key_rows.empty()) {
      by_key_.erase(it);
    } else if (it == by_key_.end()) {
      by_key_.emplace(key, std::move(key_rows));
    } else {
      it->second = std::move(key_rows);
    }
  }
  for (const auto& [key, at] : expiry) expiry_[key] = at;
}

IncrementalRows::ChangedKeys IncrementalRows::TakeChangedKeys() {
  ChangedKeys taken = std::move(changed_);
  changed_ = ChangedKeys{false, {}};
  return taken;
}

std::shared_ptr<const db::Rows> IncrementalRows::rows() const {
  if (merged_) return merged_;
  auto merged = std::make_shared<db::Rows>();
  merged->columns = columns_;
  std::size_t total = keyless_.size();
  for (const auto& [key, rows] : by_key_) total += rows.size();
  merged->values.reserve(total);
  merged->values.insert(merged->values.end(), keyless_.begin(), keyless_.end());
  for (const auto& [key, rows] : by_key_) {
    merged->values.insert(merged->values.end(), rows.begin(), rows.end());
  }
  merged_ = std::move(merged);
  return merged_;
}

void IncrementalRows::AcceptChanges(const changes::ChangeBatch& batch,
                                    changes::ResyncReason generation_reason) {
  feed_up_ = batch.feed_up;
  coverage_lost_ = batch.feed_up ? "" : batch.coverage_lost;
  if (!batch.feed_up || !have_generation_ || batch.generation != generation_ ||
      !batch.unmappable.empty()) {
    // Nothing would confirm a suspect any more, or explain one.
    audit_.Forget();
  }
  if (!batch.feed_up) {
    // No slot: whatever comes next is a new generation, to be seeded by a
    // full pass that its readiness query allows. Keys decoded before stay
    // pending until then: the full passes meanwhile settle only the xids
    // they see.
    seeded_ = false;
    have_generation_ = false;
    return;
  }
  if (!have_generation_ || batch.generation != generation_) {
    // Nothing decoded under another slot says what changed before this
    // one's consistent point: only a full pass of this generation does.
    have_generation_ = true;
    generation_ = batch.generation;
    generation_reason_ = generation_reason;
    creation_xids_ = batch.creation_xids;
    seeded_ = false;
    pending_.clear();
    carried_.clear();
    unmappable_xids_.clear();
    unmappable_ = false;
  }
  if (!batch.unmappable.empty()) {
    unmappable_ = true;
    for (const auto& transaction : batch.transactions) unmappable_xids_.insert(transaction.xid);
  }
  for (const auto& transaction : batch.transactions) {
    for (const auto& [table, keys] : transaction.keys) {
      if (tables_.count(table) == 0 || keys.empty()) continue;
      pending_[transaction.xid].insert(keys.begin(), keys.end());
      audit_.Explain(keys);
    }
  }
  for (auto& difference : audit_.Confirm(batch.complete_through_lsn)) {
    confirmed_.push_back(std::move(difference));
  }
}

std::vector<KeyDifference> IncrementalRows::TakeMismatches() {
  std::vector<KeyDifference> out;
  out.swap(confirmed_);
  return out;
}

RunPlan IncrementalRows::Plan(double now_unix) const {
  RunPlan plan;
  std::set<std::uint32_t> xids(unmappable_xids_);
  for (const auto& entry : pending_) xids.insert(entry.first);
  plan.pending_xids.assign(xids.begin(), xids.end());
  if (!feed_up_) {
    plan.reason = coverage_lost_.empty() ? FullPassReason::kFeedDown : FullPassReason::kCoverage;
  } else if (!seeded_ || !has_result_) {
    plan.reason = ever_seeded_ ? ReasonOfGeneration(generation_reason_) : FullPassReason::kStartup;
    plan.seeds = true;
    plan.creation_xids = creation_xids_;
  } else if (unmappable_) {
    plan.reason = FullPassReason::kUnmappable;
  } else if (now_unix - last_full_pass_unix_ >= full_pass_interval_seconds_) {
    plan.reason = FullPassReason::kBackstop;
  } else {
    plan.full = false;
  }
  return plan;
}

std::set<std::string> IncrementalRows::DirtyKeys(const std::vector<std::uint32_t>& visible,
                                                 double now_unix) const {
  std::set<std::string> keys(carried_);
  for (auto xid : visible) {
    auto it = pending_.find(xid);
    if (it != pending_.end()) keys.insert(it->second.begin(), it->second.end());
  }
  for (const auto& [key, at] : expiry_) {
    if (at <= now_unix) keys.insert(key);
  }
  return keys;
}

void IncrementalRows::SettleVisible(const std::vector<std::uint32_t>& visible) {
  for (auto xid : visible) {
    pending_.erase(xid);
    unmappable_xids_.erase(xid);
  }
}

void IncrementalRows::FullPassDone(const RunPlan& plan, const std::vector<std::uint32_t>& visible,
                                   bool ready, double now_unix, double seconds) {
  SettleVisible(visible);
  carried_.clear();
  // An unmappable change is settled once a full pass has seen its batch.
  if (unmappable_xids_.empty()) unmappable_ = false;
  if (plan.seeds && feed_up_ && ready) {
    seeded_ = true;
    ever_seeded_ = true;
  }
  full_passes_[plan.reason] += 1;
  last_full_pass_unix_ = now_unix;
  last_full_pass_seconds_ = seconds;
  last_dirty_keys_ = 0;
}

void IncrementalRows::RecheckDone(const std::set<std::string>& keys,
                                  const std::vector<std::uint32_t>& visible) {
  SettleVisible(visible);
  for (const auto& key : keys) carried_.erase(key);
  last_dirty_keys_ = keys.size();
}

void IncrementalRows::RecheckFailed(const std::set<std::string>& keys,
                                    const std::vector<std::uint32_t>& visible) {
  SettleVisible(visible);
  carried_.insert(keys.begin(), keys.end());
}

double IncrementalRows::next_expiry(const std::string& key) const {
  auto it = expiry_.find(key);
  return it == expiry_.end() ? 0 : it->second;
}

metrics::IncrementalStatus IncrementalRows::Status() const {
  metrics::IncrementalStatus status;
  status.mode = seeded() ? "incremental" : "full";
  if (!coverage_lost_.empty()) status.mode_reason = "coverage lost: " + coverage_lost_;
  status.dirty_keys = last_dirty_keys_;
  for (const auto& [reason, count] : full_passes_) {
    status.full_passes[FullPassReasonLabel(reason)] = count;
  }
  status.last_full_pass_unix = last_full_pass_unix_;
  status.last_full_pass_seconds = last_full_pass_seconds_;
  status.mismatches = mismatches_;
  return status;
}

std::set<std::uint32_t> IncrementalRows::pending_xids() const {
  std::set<std::uint32_t> xids;
  for (const auto& entry : pending_) xids.insert(entry.first);
  return xids;
}

}  // namespace seatwatch::checks
