#pragma once

#include "checks/check.h"
#include "config/config.h"

namespace seatwatch::checks {

// A [[metric]] entry: each row of its SQL becomes one sample of the gauge
// seatwatch_<name>. Runs on the poller thread only.
class MetricCheck : public Check {
 public:
  MetricCheck(config::QueryConfig entry, Millis interval);

  const std::string& name() const override { return entry_.name; }
  Millis interval() const override { return interval_; }
  CheckOutput Run(CheckContext& context) override;

 private:
  config::QueryConfig entry_;
  Millis interval_;
};

}  // namespace seatwatch::checks
