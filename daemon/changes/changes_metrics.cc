#include "changes/changes_metrics.h"

#include <array>
#include <sstream>

#include <prometheus/text_serializer.h>

#include "metrics/family.h"

namespace seatwatch::changes {

static_assert(static_cast<size_t>(ResyncReason::kCoverage) == kAllResyncReasons.size() - 1,
              "kAllResyncReasons follows the enum's order");

namespace {

// In the enum's order, as FeedStats::resyncs counts them.
constexpr std::array<const char*, kAllResyncReasons.size()> kResyncLabels = {
    "startup", "slot_lost", "error", "unmappable", "drain_cost", "coverage"};
static_assert(kResyncLabels.back() != nullptr, "a label for every ResyncReason");

}  // namespace

const char* ResyncLabel(ResyncReason reason) {
  size_t index = static_cast<size_t>(reason);
  return index < kResyncLabels.size() ? kResyncLabels[index] : "unknown";
}

std::vector<prometheus::MetricFamily> ChangesFamilies(const FeedStats& stats) {
  std::vector<prometheus::MetricFamily> families;
  families.push_back(metrics::SingleGauge(
      "seatwatch_changes_up",
      "1 while the change feed's replication slot exists and its last drain succeeded.",
      stats.up ? 1 : 0));
  families.push_back(metrics::SingleGauge(
      "seatwatch_changes_lag_bytes",
      "WAL the change feed's slot holds back: pg_current_wal_lsn() minus its confirmed "
      "position, at the last drain.",
      static_cast<double>(stats.lag_bytes)));
  auto decoded = metrics::CounterFamily("seatwatch_changes_decoded_total",
                                        "Row changes read from the change feed's slot.");
  metrics::AddCounter(decoded, {}, static_cast<double>(stats.decoded_total));
  families.push_back(std::move(decoded));
  families.push_back(metrics::SingleGauge("seatwatch_changes_drain_duration_seconds",
                                          "Wall time of the change feed's last drain.",
                                          stats.drain_duration_seconds));
  auto resyncs = metrics::CounterFamily(
      "seatwatch_changes_resyncs_total",
      "Times the change feed started over on a new slot (each followed by a full pass), "
      "by reason; unmappable counts changes that forced a full pass on the same slot; "
      "coverage, changes of what the publication sends of the watched tables.");
  metrics::AddCountersByLabel(resyncs, "reason", kResyncLabels, stats.resyncs);
  families.push_back(std::move(resyncs));
  families.push_back(metrics::SingleGauge(
      "seatwatch_changes_orphan_slots",
      "Replication slots the change feed gave up that were still there after it ended their "
      "sessions, plus inactive slots of its prefix it could not drop; each holds WAL.",
      static_cast<double>(stats.orphan_slots)));
  return families;
}

std::string RenderChangesMetrics(const FeedStats& stats) {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, ChangesFamilies(stats));
  return out.str();
}

}  // namespace seatwatch::changes
