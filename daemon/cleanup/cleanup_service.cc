#include "cleanup/cleanup_service.h"

#include "util/log.h"

namespace seatwatch::cleanup {

namespace {

bool SameCleanup(const config::CleanupConfig& a, const config::CleanupConfig& b) {
  return a.enabled == b.enabled && a.sql == b.sql && a.dry_run_sql == b.dry_run_sql &&
         a.interval == b.interval && a.batch_size == b.batch_size &&
         a.max_batches == b.max_batches && a.batch_pause == b.batch_pause &&
         a.lock_timeout == b.lock_timeout && a.statement_timeout == b.statement_timeout &&
         a.dry_run == b.dry_run;
}

bool SameDatabase(const config::DatabaseConfig& a, const config::DatabaseConfig& b) {
  return a.dsn == b.dsn && a.application_name == b.application_name &&
         a.connect_timeout == b.connect_timeout &&
         a.reconnect_max_backoff == b.reconnect_max_backoff;
}

}  // namespace

bool CleanupRestartNeeded(const config::Config& running, const config::Config& fresh) {
  if (!running.cleanup.enabled && !fresh.cleanup.enabled) return false;
  return !SameCleanup(running.cleanup, fresh.cleanup) ||
         !SameDatabase(running.database, fresh.database);
}

CleanupService::CleanupService(const config::Config& config)
    : config_(config), text_(std::make_shared<PublishedText>()), metrics_(config.cleanup) {
  text_->Publish(metrics_);
}

CleanupService::~CleanupService() { Stop(); }

void CleanupService::StartWorker() {
  metrics_.Configure(config_.cleanup);
  if (!config_.cleanup.enabled) {
    metrics_.SetLeader(false);
    text_->Publish(metrics_);
    return;
  }
  worker_ = std::make_unique<CleanupWorker>(config_, metrics_, text_);
  worker_->Start();
}

void CleanupService::Start() {
  if (!worker_) StartWorker();
}

void CleanupService::Reload(const config::Config& fresh) {
  bool restart = CleanupRestartNeeded(config_, fresh);
  config_ = fresh;
  if (!restart) {
    // Nothing the cleanup uses changed: keep the worker and its leadership.
    if (!worker_) {
      metrics_.Configure(config_.cleanup);
      text_->Publish(metrics_);
    }
    return;
  }
  log::Info(fresh.cleanup.enabled ? "cleanup settings changed; restarting the cleanup worker"
                                  : "cleanup disabled by the new configuration");
  Stop();
  StartWorker();
}

void CleanupService::RequestStop() {
  if (worker_) worker_->RequestStop();
}

bool CleanupService::WaitStopped(std::chrono::milliseconds timeout) {
  return !worker_ || worker_->WaitStopped(timeout);
}

void CleanupService::Stop() {
  if (!worker_) return;
  metrics_ = worker_->Stop();
  worker_.reset();
}

std::function<std::shared_ptr<const std::string>()> CleanupService::MetricsSource() const {
  std::shared_ptr<PublishedText> text = text_;
  return [text] { return text->Current(); };
}

std::function<std::shared_ptr<const CleanupStatus>()> CleanupService::StatusSource() const {
  std::shared_ptr<PublishedText> text = text_;
  return [text] { return text->Status(); };
}

}  // namespace seatwatch::cleanup
