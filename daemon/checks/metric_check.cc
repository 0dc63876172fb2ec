#include "checks/metric_check.h"

#include "checks/query_entry.h"
#include "metrics/gauge_text.h"

namespace seatwatch::checks {

std::string MetricCheck::FamilyHelp() const {
  const config::QueryConfig& query = entry();
  return (query.help.empty() ? "Rows of the " + query.name + " query" : query.help) +
         " (from the last poll).";
}

void MetricCheck::RenderKeyed(BoundRows& bound, metrics::CheckOutput& output) {
  const std::string name = FamilyName();
  IncrementalRows& state = *bound.keyed;
  rebuild_.Walk(
      state,
      [&](const std::string& key, const std::vector<KeyedRebuild::Row>* rows) {
        if (!rows) return parts_.Erase(key);
        std::string samples;
        metrics::AppendGaugeSamples(samples, name, KeyRows(state, *rows), bound.binding);
        parts_.Set(key, std::move(samples));
      },
      [&](const auto& by_key) { parts_.EraseAllBut(by_key); });
  if (parts_.empty()) return;
  if (!header_) {
    header_ = std::make_shared<const std::string>(metrics::GaugeHeader(name, FamilyHelp()));
  }
  output.parts.push_back(header_);
  for (auto& part : parts_.Parts()) output.parts.push_back(std::move(part));
}

metrics::CheckOutput MetricCheck::Run(CheckContext& context) {
  BoundRows bound = FetchRows(context);
  metrics::CheckOutput output;
  if (bound.keyed) {
    RenderKeyed(bound, output);
    return output;
  }
  rebuild_.Forget();
  output.text = metrics::RowsToGaugeText(FamilyName(), FamilyHelp(), *bound.rows, bound.binding);
  return output;
}

}  // namespace seatwatch::checks
