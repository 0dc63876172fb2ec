#include "checks/metric_check.h"

#include "checks/query_entry.h"
#include "metrics/gauge_text.h"

namespace seatwatch::checks {

metrics::CheckOutput MetricCheck::Run(CheckContext& context) {
  BoundRows bound = FetchRows(context);
  const config::QueryConfig& query = entry();
  std::string help = (query.help.empty() ? "Rows of the " + query.name + " query" : query.help) +
                     " (from the last poll).";
  metrics::CheckOutput output;
  output.text = metrics::RowsToGaugeText("seatwatch_" + query.name, help, *bound.rows,
                                         bound.binding);
  return output;
}

}  // namespace seatwatch::checks
