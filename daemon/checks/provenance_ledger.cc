#include "checks/provenance_ledger.h"

#include <unordered_map>
#include <utility>

namespace seatwatch::checks {

ProvenanceLedger::ProvenanceLedger(std::set<std::string> tables) : tables_(std::move(tables)) {}

void ProvenanceLedger::Record(const std::vector<changes::TransactionChanges>& transactions) {
  for (const auto& transaction : transactions) {
    // The kept row changes of this check's tables, by key: one pass over
    // them, however many keys the transaction touched.
    std::unordered_map<std::string, std::vector<const metrics::RowChange*>> rows_of;
    for (const auto& row : transaction.rows) {
      if (tables_.count(row.table)) rows_of[row.key].push_back(&row);
    }
    std::set<std::string> keys;
    for (const auto& [table, values] : transaction.keys) {
      if (tables_.count(table)) keys.insert(values.begin(), values.end());
    }
    for (const auto& key : keys) {
      auto commit = std::make_shared<metrics::CommitProvenance>();
      commit->xid = transaction.xid;
      commit->commit_lsn = transaction.commit_lsn;
      commit->commit_unix = transaction.commit_unix;
      commit->session = transaction.session;
      commit->truncated = transaction.rows_truncated;
      // A key's value from the WAL is its text; a row change shows it as
      // Display() does, which equals it unless it was cut.
      auto rows = rows_of.find(metrics::ValueText::Of(metrics::ValueText::Kind::kText, key)
                                   .Display());
      if (rows != rows_of.end()) {
        for (const auto* row : rows->second) {
          if (commit->changes.size() == metrics::Provenance::kMaxChangesPerKey) {
            commit->truncated = true;
            break;
          }
          commit->changes.push_back(*row);
        }
      }
      Add(key, std::move(commit));
    }
  }
  EvictOverall();
}

void ProvenanceLedger::Add(const std::string& key,
                           std::shared_ptr<const metrics::CommitProvenance> commit) {
  KeyLog& log = by_key_[key];
  if (log.commits.size() == kPerKey) {
    log.commits.erase(log.commits.begin());
    log.omitted += 1;
    commits_ -= 1;
  }
  std::uint64_t sequence = next_sequence_++;
  log.commits.push_back({sequence, std::move(commit)});
  log.built.reset();
  order_.emplace_back(sequence, key);
  commits_ += 1;
}

void ProvenanceLedger::EvictOverall() {
  while (commits_ > kMaxCommits && !order_.empty()) {
    auto [sequence, key] = std::move(order_.front());
    order_.pop_front();
    auto it = by_key_.find(key);
    if (it == by_key_.end() || it->second.commits.empty() ||
        it->second.commits.front().sequence != sequence) {
      continue;  // gone already
    }
    KeyLog& log = it->second;
    log.commits.erase(log.commits.begin());
    log.omitted += 1;
    log.built.reset();
    commits_ -= 1;
    evicted_ += 1;
    // A key with nothing left is forgotten whole: a log per key evicted
    // would grow without bound.
    if (log.commits.empty()) by_key_.erase(it);
  }
  // Entries of commits gone otherwise: keep the order within bounds too.
  if (order_.size() > 2 * kMaxCommits + 2 * kPerKey) {
    std::deque<std::pair<std::uint64_t, std::string>> kept;
    for (auto& entry : order_) {
      auto it = by_key_.find(entry.second);
      if (it == by_key_.end()) continue;
      for (const auto& held : it->second.commits) {
        if (held.sequence == entry.first) {
          kept.push_back(std::move(entry));
          break;
        }
      }
    }
    order_ = std::move(kept);
  }
}

std::shared_ptr<const metrics::Provenance> ProvenanceLedger::Of(const std::string& key) const {
  auto it = by_key_.find(key);
  if (it == by_key_.end()) return nullptr;
  const KeyLog& log = it->second;
  if (!log.built) {
    auto provenance = std::make_shared<metrics::Provenance>();
    provenance->earlier_omitted = log.omitted;
    for (const auto& entry : log.commits) provenance->commits.push_back(*entry.commit);
    log.built = std::move(provenance);
  }
  return log.built;
}

void ProvenanceLedger::Settle(const std::set<std::string>& violated,
                              const std::set<std::uint32_t>& pending) {
  for (auto it = by_key_.begin(); it != by_key_.end();) {
    if (violated.count(it->first)) {
      ++it;
      continue;
    }
    KeyLog& log = it->second;
    std::vector<Entry> unseen;
    for (const auto& entry : log.commits) {
      if (pending.count(entry.commit->xid)) unseen.push_back(entry);
    }
    if (unseen.size() == log.commits.size()) {
      ++it;  // the run saw none of them
      continue;
    }
    commits_ -= log.commits.size() - unseen.size();
    if (unseen.empty()) {
      it = by_key_.erase(it);
      continue;
    }
    log.commits = std::move(unseen);
    log.omitted = 0;  // clean as of the commits the run saw
    log.built.reset();
    ++it;
  }
}

}  // namespace seatwatch::checks
