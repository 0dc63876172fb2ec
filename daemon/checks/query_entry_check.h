#pragma once

#include <memory>
#include <optional>
#include <string>

#include "checks/check.h"
#include "checks/incremental_source.h"
#include "checks/query_entry.h"
#include "config/config.h"

namespace seatwatch::checks {

// What the checks of [[invariant]] and [[metric]] entries share: the entry,
// its interval and, for an entry with scoped_sql while [changes] is enabled,
// the IncrementalSource its rows come from; everything after the fetch is
// the subclass's. Runs on the poller thread only.
class QueryEntryCheck : public Check {
 public:
  QueryEntryCheck(config::QueryConfig entry, Millis interval,
                  std::optional<IncrementalSettings> incremental = std::nullopt);

  const std::string& name() const override { return entry_.name; }
  Millis interval() const override {
    return incremental_ ? incremental_->Interval(interval_) : interval_;
  }
  bool wants_changes() const override { return incremental_ != nullptr; }
  void AcceptChanges(const changes::ChangeBatch& batch,
                     changes::ResyncReason generation_reason) override;
  std::optional<metrics::IncrementalStatus> incremental_status() const override;
  // Keeps the incremental state of a previous check of the same class.
  void TakeStateFrom(Check& previous) override;

 protected:
  const config::QueryConfig& entry() const { return entry_; }
  // The entry's rows: from the IncrementalSource if it has one, else its SQL.
  BoundRows FetchRows(CheckContext& context);
  // Incremental mode: each violated key's provenance (IncrementalSource::
  // Attribute), once the run's results are built.
  void AttributeCauses(std::vector<metrics::InvariantResult>& invariants) {
    if (incremental_) incremental_->Attribute(invariants);
  }

 private:
  config::QueryConfig entry_;
  Millis interval_;
  std::unique_ptr<IncrementalSource> incremental_;
};

}  // namespace seatwatch::checks
