#include "checks/metric_check.h"

#include "checks/query_entry.h"

namespace seatwatch::checks {

MetricCheck::MetricCheck(config::QueryConfig entry, Millis interval)
    : entry_(std::move(entry)), interval_(interval) {}

CheckOutput MetricCheck::Run(CheckContext& context) {
  BoundRows bound = FetchEntryRows(context, entry_);
  prometheus::MetricFamily family;
  family.name = "seatwatch_" + entry_.name;
  family.help = (entry_.help.empty() ? "Rows of the " + entry_.name + " query" : entry_.help) +
                " (from the last poll).";
  family.type = prometheus::MetricType::Gauge;
  family.metric = metrics::RowsToGauges(*bound.rows, bound.binding);
  CheckOutput output;
  output.families.push_back(std::move(family));
  return output;
}

}  // namespace seatwatch::checks
