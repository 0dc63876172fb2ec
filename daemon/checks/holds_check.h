#pragma once

#include <vector>

#include <prometheus/metric_family.h>

#include "checks/check.h"
#include "config/config.h"
#include "db/rows.h"

namespace seatwatch::checks {

// The one row of the [holds] query, judged by the database's clock.
struct HoldsCounts {
  double active = 0;                  // held, hold_expires_at > now()
  double expired = 0;                 // still held, hold_expires_at <= now(): the backlog
  double expired_oldest_seconds = 0;  // now() - the oldest expiry among those (0: none)
  double payments_lapsed = 0;         // 'started' payments whose fan no longer holds the seat
};

// The result columns the [holds] query must return.
inline const std::vector<std::string>& HoldsColumns() {
  static const std::vector<std::string> kColumns = {
      "holds_active", "holds_expired", "holds_expired_oldest_seconds", "payments_lapsed"};
  return kColumns;
}

// Pure: the query's result to counts. Exactly one row; a NULL counts as 0.
// Throws metrics::MissingColumn for a missing column and std::runtime_error
// for any other shape (no row, several rows, a value that is not a number).
HoldsCounts HoldsFromRows(const db::Rows& rows);

// Pure: counts to the four gauges seatwatch_holds_active,
// seatwatch_holds_expired, seatwatch_holds_expired_oldest_seconds and
// seatwatch_payments_lapsed.
std::vector<prometheus::MetricFamily> HoldsFamilies(const HoldsCounts& counts);

// The counts a holds check's run left in its output's facts; nullptr for
// another check's output.
const HoldsCounts* HoldsOf(const metrics::CheckOutput& output);

// The [holds] section: the cleanup backlog as metrics. Runs in the shared
// snapshot transaction on the poller thread only; keeps no state.
class HoldsCheck : public Check {
 public:
  HoldsCheck(config::HoldsConfig config, Millis interval);

  const std::string& name() const override { return name_; }
  Millis interval() const override { return interval_; }
  metrics::CheckOutput Run(CheckContext& context) override;

 private:
  config::HoldsConfig config_;
  Millis interval_;
  std::string name_ = "holds";
};

}  // namespace seatwatch::checks
