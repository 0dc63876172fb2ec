#include "declare/metric_declaration.h"

#include <algorithm>
#include <set>

namespace seatwatch::declare {

std::vector<std::string> MetricKindNames() { return {"count"}; }

void ValidateMetric(const MetricDeclaration& metric) {
  if (metric.tallies.empty()) {
    throw DeclarationError("counts", "must list at least one count { name, table, where? }");
  }
  if (metric.label.empty()) {
    throw DeclarationError("label", "is required: the label whose value names each count");
  }
  if (std::find(metric.labels.begin(), metric.labels.end(), metric.label) != metric.labels.end()) {
    throw DeclarationError("label", "\"" + metric.label + "\" is a label of the key already");
  }
  std::set<std::string> names;
  for (const auto& tally : metric.tallies) {
    if (!names.insert(tally.name).second) {
      throw DeclarationError("counts", "count \"" + tally.name + "\" is listed twice");
    }
    if (tally.rows.table.name.empty()) throw DeclarationError("counts.table", "is required");
    if (tally.rows.columns.size() != metric.key.size()) {
      throw DeclarationError("counts.columns",
                             "count \"" + tally.name + "\" names " +
                                 std::to_string(tally.rows.columns.size()) +
                                 " key columns; the key has " +
                                 std::to_string(metric.key.size()));
    }
  }
}

}  // namespace seatwatch::declare
