#include "checks/metric_check.h"

#include "checks/query_entry.h"
#include "metrics/gauge_text.h"

namespace seatwatch::checks {

MetricCheck::MetricCheck(config::QueryConfig entry, Millis interval)
    : entry_(std::move(entry)), interval_(interval) {}

CheckOutput MetricCheck::Run(CheckContext& context) {
  BoundRows bound = FetchEntryRows(context, entry_);
  std::string help = (entry_.help.empty() ? "Rows of the " + entry_.name + " query" : entry_.help) +
                     " (from the last poll).";
  CheckOutput output;
  output.text = metrics::RowsToGaugeText("seatwatch_" + entry_.name, help, *bound.rows,
                                         bound.binding);
  return output;
}

}  // namespace seatwatch::checks
