#pragma once

#include "checks/query_entry_check.h"

namespace seatwatch::checks {

// A [[metric]] entry: each row of its SQL becomes one sample of the gauge
// seatwatch_<name>. Runs on the poller thread only.
class MetricCheck : public QueryEntryCheck {
 public:
  using QueryEntryCheck::QueryEntryCheck;

  metrics::CheckOutput Run(CheckContext& context) override;
};

}  // namespace seatwatch::checks
