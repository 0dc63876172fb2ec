#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <prometheus/metric_family.h>

#include "cleanup/cleanup_status.h"
#include "config/config.h"
#include "metrics/family.h"

namespace seatwatch::cleanup {

// How one cleanup batch ended; the `result` label of
// seatwatch_cleanup_batches_total.
enum class BatchResult { kOk = 0, kLockTimeout = 1, kError = 2 };

const char* BatchResultLabel(BatchResult result);

// The cleanup's own series:
//   seatwatch_cleanup_enabled                          gauge
//   seatwatch_cleanup_leader                           gauge
//   seatwatch_cleanup_in_recovery                      gauge
//   seatwatch_cleanup_interval_seconds                 gauge
//   seatwatch_cleanup_freed_total                      counter
//   seatwatch_cleanup_batches_total{result}            counter (ok, lock_timeout, error)
//   seatwatch_cleanup_batch_duration_seconds           histogram
//   seatwatch_cleanup_last_success_timestamp_seconds   gauge
// Every series is exported from the start (counters at 0), also when cleanup
// is disabled, so dashboards and alert rules never see them absent.
// A plain value, not thread-safe: the worker thread owns it and publishes
// Render()'s text; a restarted worker takes it over to keep the counters.
class CleanupMetrics {
 public:
  // Buckets for short batches: milliseconds up to the default 2s statement_timeout.
  static const std::vector<double>& BatchBuckets();

  explicit CleanupMetrics(const config::CleanupConfig& config);

  // On reload: takes the new enabled flag and interval, keeps the counters.
  void Configure(const config::CleanupConfig& config);
  void SetLeader(bool leader) { leader_ = leader; }
  // What the last run found: the cleanup's connection reaches a standby.
  void SetInRecovery(bool in_recovery) { in_recovery_ = in_recovery; }
  void AddFreed(std::uint64_t count) { freed_ += count; }
  void ObserveBatch(BatchResult result, double seconds);
  void SetLastSuccess(double unix_seconds) { last_success_unix_ = unix_seconds; }
  // How the last run ended, for Status() only (no series of its own).
  void SetLastRun(double unix_seconds, BatchResult result, std::uint64_t freed,
                  std::string error);

  bool leader() const { return leader_; }
  bool in_recovery() const { return in_recovery_; }
  std::uint64_t freed() const { return freed_; }
  std::uint64_t batches(BatchResult result) const { return batches_[static_cast<size_t>(result)]; }

  std::vector<prometheus::MetricFamily> Families() const;
  std::string Render() const;
  CleanupStatus Status() const;

 private:
  bool enabled_ = false;
  bool dry_run_ = false;
  double interval_seconds_ = 0;
  bool leader_ = false;
  bool in_recovery_ = false;
  std::uint64_t freed_ = 0;
  std::array<std::uint64_t, 3> batches_{};
  metrics::HistogramData durations_;
  double last_success_unix_ = 0;
  double last_run_unix_ = 0;
  BatchResult last_run_result_ = BatchResult::kOk;
  std::uint64_t last_run_freed_ = 0;
  std::string last_run_error_;
};

}  // namespace seatwatch::cleanup
