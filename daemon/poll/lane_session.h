#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "db/server_facts.h"
#include "db/session.h"
#include "db/statement_watchdog.h"
#include "poll/lane.h"
#include "poll/scheduled_check.h"

namespace seatwatch::poll {

// One lane's database session and one poll's work on it, every statement
// under the lane's StatementWatchdog: the server's facts first, then each
// due check in its own transaction, with the two retries of a poll (a
// session the server closed while idle, a recovery conflict on a standby).
// A check that gets no answer within its statement_timeout plus
// kWatchdogMargin is cancelled and dropped, and `on_overdue` runs at that
// moment (the poller publishes the lane as overdue), even if the poller's
// thread stays blocked.
//
// Thread-safety: the poller's thread alone uses it, but for Abort(), which
// any thread may call (Poller::Stop).
class LaneSession {
 public:
  LaneSession(const config::Config& config, Lane lane, std::function<void()> on_overdue);

  // A new session with `config`'s settings for this lane; its server's
  // privileges are read afresh (another server, maybe another role).
  void Reconnect(const config::Config& config);

  // One statement. A session the server closed while idle is reconnected
  // and read again at once, as for a check. `unreachable`: why the lane
  // cannot run its checks in this poll (no connection, or none that
  // answers: the watchdog gave up), which they then fail with; else left
  // empty. Other failures leave the lane without facts for this poll; its
  // checks say the rest.
  std::optional<db::ServerFacts> ReadFacts(const std::function<bool()>& stopping,
                                           std::string& unreachable);

  // The poll's due checks, one transaction each, in order, with `config`'s
  // timeouts; `stamp` after each (a long poll is progress too).
  void RunDue(const config::Config& config, const std::vector<ScheduledCheck*>& due,
              const std::function<bool()>& stopping, const std::function<void()>& stamp);

  // Cancels the statement in flight, and drops the connection if the cancel
  // is not answered at once.
  void Abort() { watchdog_->Abort(); }

  db::Session& session() { return *session_; }
  db::StatementWatchdog& watchdog() { return *watchdog_; }

 private:
  Lane lane_;
  std::unique_ptr<db::Session> session_;
  std::unique_ptr<db::StatementWatchdog> watchdog_;
  db::ServerFactsReader facts_reader_;
};

// Whether `lane`'s session made with `a` serves `b` as it is: the same DSN,
// session settings and reconnect backoff. Otherwise a reload reconnects.
bool SameSession(const config::Config& a, const config::Config& b, Lane lane);

}  // namespace seatwatch::poll
