#include "checks/metric_check.h"

#include "checks/query_entry.h"
#include "metrics/gauge_text.h"

namespace seatwatch::checks {

MetricCheck::MetricCheck(config::QueryConfig entry, Millis interval,
                         std::optional<IncrementalSettings> incremental)
    : entry_(std::move(entry)), interval_(interval) {
  if (incremental && entry_.incremental()) {
    incremental_ = std::make_unique<IncrementalSource>(entry_, *incremental);
  }
}

void MetricCheck::AcceptChanges(const changes::ChangeBatch& batch,
                                changes::ResyncReason generation_reason) {
  if (incremental_) incremental_->AcceptChanges(batch, generation_reason);
}

std::optional<metrics::IncrementalStatus> MetricCheck::incremental_status() const {
  if (!incremental_) return std::nullopt;
  return incremental_->Status();
}

void MetricCheck::TakeStateFrom(Check& previous) {
  auto* old = dynamic_cast<MetricCheck*>(&previous);
  if (old && incremental_ && old->incremental_) incremental_->TakeStateFrom(*old->incremental_);
}

metrics::CheckOutput MetricCheck::Run(CheckContext& context) {
  BoundRows bound =
      incremental_ ? incremental_->Fetch(context) : FetchEntryRows(context, entry_);
  std::string help = (entry_.help.empty() ? "Rows of the " + entry_.name + " query" : entry_.help) +
                     " (from the last poll).";
  metrics::CheckOutput output;
  output.text = metrics::RowsToGaugeText("seatwatch_" + entry_.name, help, *bound.rows,
                                         bound.binding);
  return output;
}

}  // namespace seatwatch::checks
