#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "cleanup/cleanup_metrics.h"
#include "cleanup/cleanup_status.h"
#include "cleanup/cleanup_worker.h"
#include "cleanup/published_text.h"
#include "config/config.h"

namespace seatwatch::cleanup {

// True when going from `running` to `fresh` needs a new cleanup worker: the
// [cleanup] section (including its SQL text) or the database settings the
// cleanup connection uses changed.
bool CleanupRestartNeeded(const config::Config& running, const config::Config& fresh);

// The daemon's handle on cleanup across its life: starts the worker when
// [cleanup] is enabled, restarts it on a reload that changes its settings,
// stops it on shutdown, and exports its metrics either way (with cleanup
// off: seatwatch_cleanup_enabled 0 and leader 0). Start/Reload/Stop from
// one controlling thread; the MetricsSource from any thread.
class CleanupService {
 public:
  explicit CleanupService(const config::Config& config);
  ~CleanupService();
  CleanupService(const CleanupService&) = delete;
  CleanupService& operator=(const CleanupService&) = delete;

  void Start();
  void Reload(const config::Config& fresh);
  // For shutdown: asks the worker to stop (cancelling the batch in flight)
  // without waiting, then whether it has finished within `timeout`; Stop()
  // after it only joins.
  void RequestStop();
  bool WaitStopped(std::chrono::milliseconds timeout);
  void Stop();

  // For http::RegisterHandlers' extra_metrics: the last published text. Never
  // touches the database; stays valid after the service is gone.
  std::function<std::shared_ptr<const std::string>()> MetricsSource() const;
  // For the status page: the last published status, the same way.
  std::function<std::shared_ptr<const CleanupStatus>()> StatusSource() const;

 private:
  void StartWorker();

  config::Config config_;
  std::shared_ptr<PublishedText> text_;
  CleanupMetrics metrics_;  // kept while no worker runs
  std::unique_ptr<CleanupWorker> worker_;
};

}  // namespace seatwatch::cleanup
