#include "checks/backstop_audit.h"

#include <algorithm>

namespace seatwatch::checks {

namespace {

using Row = std::vector<db::Rows::Cell>;
using ByKey = std::map<std::string, std::vector<Row>>;

std::vector<Row> Sorted(std::vector<Row> rows) {
  std::sort(rows.begin(), rows.end());
  return rows;
}

const std::vector<Row>& RowsOf(const ByKey& by_key, const std::string& key) {
  static const std::vector<Row> kNone;
  auto it = by_key.find(key);
  return it == by_key.end() ? kNone : it->second;
}

}  // namespace

std::vector<KeyDifference> DifferingKeys(const std::vector<std::string>& columns,
                                         const ByKey& incremental, const ByKey& full,
                                         const std::set<std::string>& excluded) {
  std::set<std::string> keys;
  for (const auto& entry : incremental) keys.insert(entry.first);
  for (const auto& entry : full) keys.insert(entry.first);
  std::vector<KeyDifference> out;
  for (const auto& key : keys) {
    if (excluded.count(key)) continue;
    const auto& before = RowsOf(incremental, key);
    const auto& after = RowsOf(full, key);
    if (before.size() == after.size() && (before == after || Sorted(before) == Sorted(after))) {
      continue;
    }
    out.push_back(KeyDifference{key, columns, before, after});
  }
  return out;
}

void BackstopAudit::Suspect(std::vector<KeyDifference> differences, std::uint64_t lsn) {
  suspects_.clear();
  lsn_ = lsn;
  for (auto& difference : differences) {
    if (suspects_.size() >= kMaxSuspects) {
      ++dropped_;
      continue;
    }
    std::string key = difference.key;
    suspects_.emplace(std::move(key), std::move(difference));
  }
}

void BackstopAudit::Explain(const std::set<std::string>& keys) {
  if (suspects_.empty()) return;
  for (const auto& key : keys) suspects_.erase(key);
}

std::vector<KeyDifference> BackstopAudit::Confirm(std::uint64_t complete_through) {
  std::vector<KeyDifference> confirmed;
  if (suspects_.empty() || complete_through == 0 || complete_through < lsn_) return confirmed;
  for (auto& entry : suspects_) confirmed.push_back(std::move(entry.second));
  suspects_.clear();
  return confirmed;
}

void BackstopAudit::Forget() { suspects_.clear(); }

}  // namespace seatwatch::checks
