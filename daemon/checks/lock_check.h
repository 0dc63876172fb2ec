#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "checks/check.h"
#include "config/config.h"
#include "locks/hot_row.h"
#include "locks/lock_poll.h"
#include "locks/wait_episodes.h"

namespace seatwatch::checks {

// The locks check ("locks"): who waits on a heavyweight lock, behind whom, on
// which row, for how long. Runs in a short READ COMMITTED READ ONLY
// transaction of its own every [locks] interval: one statement reads
// pg_stat_activity once and asks pg_locks and pg_blocking_pids() about
// waiting sessions only, and nothing at all when none waits. Keeps
// wait episodes, their counter and histogram, and the hot-row key cache
// across runs. Not thread-safe: its poller (in the daemon, the locks lane's)
// runs it on one thread.
class LockCheck : public Check {
 public:
  explicit LockCheck(config::LocksConfig config);

  const std::string& name() const override { return name_; }
  Millis interval() const override { return config_.interval; }
  bool shares_snapshot() const override { return false; }
  std::optional<Millis> statement_timeout() const override { return config_.statement_timeout; }
  bool own_session() const override { return true; }

  metrics::CheckOutput Run(CheckContext& context) override;
  void TakeStateFrom(Check& previous) override;

  // The last successful poll, for tests.
  const locks::LockPoll& last_poll() const { return last_; }
  const locks::WaitEpisodes& episodes() const { return episodes_; }

 private:
  locks::LockPoll Read(CheckContext& context);
  void NameHotRows(pqxx::transaction_base& tx, locks::LockPoll& poll);
  void LogLongWaits(const locks::LockPoll& poll, const std::vector<int>& pids) const;

  std::string name_ = "locks";
  config::LocksConfig config_;
  locks::HotRowResolver hot_rows_;
  locks::WaitEpisodes episodes_;
  locks::LockPoll last_;
  std::map<std::string, std::string> named_rows_;  // row target -> name, from the last poll
};

// The poll a locks check's run left in its output's facts; null for another
// check's output.
std::shared_ptr<const locks::LockPoll> LockPollOf(const metrics::CheckOutput& output);

}  // namespace seatwatch::checks
