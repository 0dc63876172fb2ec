#include "cleanup/cleanup_metrics.h"

#include <array>

#include "metrics/family.h"
#include "metrics/family_text.h"
#include "util/duration.h"

namespace seatwatch::cleanup {

namespace {

// By BatchResult's value, as CleanupMetrics::batches_ counts them.
constexpr std::array<const char*, 3> kBatchResultLabels = {"ok", "lock_timeout", "error"};

}  // namespace

const char* BatchResultLabel(BatchResult result) {
  size_t index = static_cast<size_t>(result);
  return index < kBatchResultLabels.size() ? kBatchResultLabels[index] : "error";
}

const std::vector<double>& CleanupMetrics::BatchBuckets() {
  static const std::vector<double> kBuckets = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                               0.1,   0.25,   0.5,   1,    2.5,   5};
  return kBuckets;
}

CleanupMetrics::CleanupMetrics(const config::CleanupConfig& config) : durations_(BatchBuckets()) {
  Configure(config);
}

void CleanupMetrics::Configure(const config::CleanupConfig& config) {
  enabled_ = config.enabled;
  dry_run_ = config.dry_run;
  interval_seconds_ = util::ToSeconds(config.interval);
  if (!enabled_) {
    leader_ = false;
    in_recovery_ = false;
  }
}

void CleanupMetrics::ObserveBatch(BatchResult result, double seconds) {
  ++batches_[static_cast<size_t>(result)];
  durations_.Observe(seconds);
}

std::vector<prometheus::MetricFamily> CleanupMetrics::Families() const {
  std::vector<prometheus::MetricFamily> out;
  out.push_back(metrics::SingleGauge(
      "seatwatch_cleanup_enabled",
      "1 if hold cleanup is configured on in this instance ([cleanup] enabled), 0 if not.",
      enabled_ ? 1 : 0));
  out.push_back(metrics::SingleGauge(
      "seatwatch_cleanup_leader",
      "1 if this instance holds the cleanup leader lock (only the leader frees holds), 0 if not.",
      leader_ ? 1 : 0));
  out.push_back(metrics::SingleGauge(
      "seatwatch_cleanup_in_recovery",
      "1 while the cleanup's connection reaches a standby (pg_is_in_recovery()): it frees "
      "nothing and waits for a primary; 0 on a primary, or before the first answer.",
      in_recovery_ ? 1 : 0));
  out.push_back(metrics::SingleGauge("seatwatch_cleanup_interval_seconds",
                                     "The configured [cleanup] interval between runs, in seconds.",
                                     interval_seconds_));
  auto freed = metrics::CounterFamily(
      "seatwatch_cleanup_freed_total",
      "Expired holds set free by this instance's cleanup; with dry_run on, the holds it would "
      "have freed (nothing is changed then).");
  metrics::AddCounter(freed, {}, static_cast<double>(freed_));
  out.push_back(std::move(freed));
  auto batches = metrics::CounterFamily(
      "seatwatch_cleanup_batches_total",
      "Cleanup batches (one short transaction each) by result: ok, lock_timeout (55P03), error "
      "(anything else, including serialization failures and statement timeouts).");
  metrics::AddCountersByLabel(batches, "result", kBatchResultLabels, batches_);
  out.push_back(std::move(batches));
  auto durations = metrics::HistogramFamily("seatwatch_cleanup_batch_duration_seconds",
                                            "Wall time of each cleanup batch, in seconds.");
  durations_.AddTo(durations);
  out.push_back(std::move(durations));
  out.push_back(metrics::SingleGauge(
      "seatwatch_cleanup_last_success_timestamp_seconds",
      "Unix time at which the last cleanup run without a failed batch ended (0: never).",
      last_success_unix_));
  return out;
}

std::string CleanupMetrics::Render() const { return metrics::RenderText(Families()); }

void CleanupMetrics::SetLastRun(double unix_seconds, BatchResult result, std::uint64_t freed,
                                std::string error) {
  last_run_unix_ = unix_seconds;
  last_run_result_ = result;
  last_run_freed_ = freed;
  last_run_error_ = std::move(error);
}

CleanupStatus CleanupMetrics::Status() const {
  CleanupStatus status;
  status.enabled = enabled_;
  status.dry_run = dry_run_;
  status.leader = leader_;
  status.in_recovery = in_recovery_;
  status.interval_seconds = interval_seconds_;
  status.freed = freed_;
  status.batches_ok = batches(BatchResult::kOk);
  status.batches_lock_timeout = batches(BatchResult::kLockTimeout);
  status.batches_error = batches(BatchResult::kError);
  status.last_success_unix = last_success_unix_;
  status.last_run_unix = last_run_unix_;
  if (last_run_unix_ > 0) status.last_run_result = BatchResultLabel(last_run_result_);
  status.last_run_freed = last_run_freed_;
  status.last_run_error = last_run_error_;
  return status;
}

}  // namespace seatwatch::cleanup
