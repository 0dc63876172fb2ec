#pragma once

#include <memory>
#include <optional>

#include <chrono>
#include <map>
#include <string>

#include "checks/check.h"
#include "checks/incremental_source.h"
#include "config/config.h"

namespace seatwatch::checks {

// An [[invariant]] entry: one query judging one invariant, or, with
// invariant_column, one pass that judges several. When an invariant is
// violated its detail_sql (if any) fetches the first offending rows in the
// same snapshot, given the offending keys (see DetailParameters). A detail
// query may still cost a few index lookups per key, so it runs again only
// when the violations change, or after kDetailMaxAge. Runs on the poller
// thread only; keeps the last details between runs.
class InvariantCheck : public Check {
 public:
  static constexpr int kDetailRows = 20;
  static constexpr std::chrono::minutes kDetailMaxAge{5};

  // With `incremental` (an entry with scoped_sql while [changes] is
  // enabled) the rows come from an IncrementalSource; everything after the
  // fetch is the same.
  InvariantCheck(config::QueryConfig entry, Millis interval,
                 std::optional<IncrementalSettings> incremental = std::nullopt);

  const std::string& name() const override { return entry_.name; }
  Millis interval() const override {
    return incremental_ ? incremental_->Interval(interval_) : interval_;
  }
  std::vector<std::string> invariants() const override { return entry_.invariants; }
  metrics::CheckOutput Run(CheckContext& context) override;
  bool wants_changes() const override { return incremental_ != nullptr; }
  void AcceptChanges(const changes::ChangeBatch& batch,
                     changes::ResyncReason generation_reason) override;
  std::optional<metrics::IncrementalStatus> incremental_status() const override;
  void TakeStateFrom(Check& previous) override;

 private:
  metrics::DetailRows FetchDetail(CheckContext& context, const std::string& sql,
                                  const std::vector<metrics::Violation>& violations) const;

  struct CachedDetail {
    std::string violations;  // what the detail was fetched for
    metrics::DetailRows rows;
    std::chrono::steady_clock::time_point fetched;
  };

  config::QueryConfig entry_;
  Millis interval_;
  std::unique_ptr<IncrementalSource> incremental_;
  std::map<std::string, CachedDetail> details_;  // by invariant
};

// How many leading parameters a query uses: the highest $N in its text.
size_t CountParameters(const std::string& sql);

}  // namespace seatwatch::checks
