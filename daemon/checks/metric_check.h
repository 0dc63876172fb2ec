#pragma once

#include <memory>
#include <optional>

#include "checks/check.h"
#include "checks/incremental_source.h"
#include "config/config.h"

namespace seatwatch::checks {

// A [[metric]] entry: each row of its SQL becomes one sample of the gauge
// seatwatch_<name>. Runs on the poller thread only.
class MetricCheck : public Check {
 public:
  // With `incremental` (an entry with scoped_sql while [changes] is
  // enabled) the rows come from an IncrementalSource; everything after the
  // fetch is the same.
  MetricCheck(config::QueryConfig entry, Millis interval,
              std::optional<IncrementalSettings> incremental = std::nullopt);

  const std::string& name() const override { return entry_.name; }
  Millis interval() const override {
    return incremental_ ? incremental_->Interval(interval_) : interval_;
  }
  metrics::CheckOutput Run(CheckContext& context) override;
  bool wants_changes() const override { return incremental_ != nullptr; }
  void AcceptChanges(const changes::ChangeBatch& batch,
                     changes::ResyncReason generation_reason) override;
  std::optional<metrics::IncrementalStatus> incremental_status() const override;
  void TakeStateFrom(Check& previous) override;

 private:
  config::QueryConfig entry_;
  Millis interval_;
  std::unique_ptr<IncrementalSource> incremental_;
};

}  // namespace seatwatch::checks
