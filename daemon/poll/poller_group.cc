#include "poll/poller_group.h"

#include "util/thread_name.h"

namespace seatwatch::poll {

PollerGroup::PollerGroup(const config::Config& config,
                         std::vector<std::unique_ptr<checks::Check>> checks,
                         metrics::SnapshotStore& store, const std::string& version)
    : publisher_(std::make_shared<StatePublisher>(store, std::size(kLanes))) {
  std::vector<std::string> names;
  for (Lane lane : kLanes) names.push_back(LaneName(lane));
  progress_ = std::make_shared<LaneProgress>(std::move(names));
  for (std::size_t slot = 0; slot < std::size(kLanes); ++slot) {
    pollers_.push_back(std::make_unique<Poller>(config, TakeLane(checks, kLanes[slot]),
                                                kLanes[slot], publisher_, slot, version));
    pollers_.back()->SetProgress(progress_);
  }
  // The change feed belongs to the checks lane, the only one with
  // incremental checks; it is made only while one of them is configured.
  for (std::size_t slot = 0; slot < std::size(kLanes); ++slot) {
    if (kLanes[slot] != Lane::kChecks) continue;
    pollers_[slot]->SetChangeFeedFactory(
        [](const config::Config& config) { return changes::MakeChangeFeed(config); });
  }
}

PollerGroup::~PollerGroup() {
  Stop();
  Wait();
}

void PollerGroup::Start() {
  if (!threads_.empty()) return;
  running_ = pollers_.size();
  for (std::size_t i = 0; i < pollers_.size(); ++i) {
    threads_.emplace_back([this, p = pollers_[i].get(), lane = kLanes[i]] {
      thread_name::Set("sw-" + LaneName(lane));
      p->Run();
      std::lock_guard<std::mutex> lock(mutex_);
      --running_;
      finished_.notify_all();
    });
  }
}

void PollerGroup::Reload(const config::Config& config,
                         std::vector<std::unique_ptr<checks::Check>> checks) {
  for (std::size_t slot = 0; slot < std::size(kLanes); ++slot) {
    pollers_[slot]->Reload(config, TakeLane(checks, kLanes[slot]));
  }
}

void PollerGroup::Stop() {
  for (auto& poller : pollers_) poller->Stop();
}

bool PollerGroup::WaitFor(std::chrono::milliseconds timeout) {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!finished_.wait_for(lock, timeout, [this] { return running_ == 0; })) return false;
  }
  Wait();
  return true;
}

void PollerGroup::Wait() {
  for (auto& thread : threads_) thread.join();
  threads_.clear();
}

}  // namespace seatwatch::poll
