#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace seatwatch::poll {

// How far each lane's loop has got, for the service manager (see
// service/): a heartbeat every lane stamps at every turn of its loop, before
// every check and at least every stamp_period() while it waits between
// polls, and whether the lane has published the results of its first poll.
// A lane that stops stamping is wedged (a statement its watchdog could not
// cut, a connect libpq does not bound, a deadlock): the watchdog pinger
// stops pinging systemd, which restarts the daemon. Thread-safe.
class LaneProgress {
 public:
  using Clock = std::chrono::steady_clock;

  explicit LaneProgress(std::vector<std::string> lane_names);

  // Before the lanes start: how long a lane may wait between stamps (a
  // quarter of the watchdog interval; hours without a watchdog), and what
  // to call, once, from the lane thread that completes the first publish of
  // every lane.
  void SetStampPeriod(Clock::duration period);
  Clock::duration stamp_period() const;
  void OnAllPublished(std::function<void()> callback);

  void Stamp(std::size_t lane);
  // After the lane's loop has published a poll's results (success or not).
  void MarkPublished(std::size_t lane);

  bool all_published() const;
  // The first lane whose last stamp is older than `max_age` at `now`, if
  // any, with that age.
  struct Stall {
    std::string lane;
    Clock::duration age;
  };
  std::optional<Stall> FindStall(Clock::duration max_age, Clock::time_point now) const;

 private:
  struct Lane {
    std::string name;
    Clock::time_point stamped;
    bool published = false;
  };
  mutable std::mutex mutex_;
  std::vector<Lane> lanes_;
  Clock::duration stamp_period_ = std::chrono::hours(1);
  std::function<void()> on_all_published_;
  bool all_published_ = false;
};

}  // namespace seatwatch::poll
