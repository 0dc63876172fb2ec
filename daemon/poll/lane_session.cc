#include "poll/lane_session.h"

#include <pqxx/except>

#include "db/local_settings.h"
#include "db/query_cache.h"
#include "poll/check_runner.h"
#include "util/log.h"

namespace seatwatch::poll {

namespace {

// The watchdog's limits for one check (see StatementWatchdog): silence, the
// check's statement_timeout plus a margin; in all, one statement_timeout per
// statement it may run (its query, one detail query per invariant, the
// transaction's own and its SET LOCAL; an incremental check's visibility
// and readiness queries) plus the margin.
db::StatementWatchdog::Clock::duration Silence(const checks::Check& check,
                                               const db::LocalSettings& wanted) {
  return check.statement_timeout().value_or(wanted.statement_timeout) + kWatchdogMargin;
}

db::StatementWatchdog::Clock::duration Budget(const checks::Check& check,
                                              const db::LocalSettings& wanted) {
  auto timeout = check.statement_timeout().value_or(wanted.statement_timeout);
  int statements = 3 + static_cast<int>(check.invariants().size()) + (check.wants_changes() ? 2 : 0);
  return timeout * statements + kWatchdogMargin;
}

std::unique_ptr<db::Session> MakeSession(const config::Config& config, Lane lane) {
  return std::make_unique<db::Session>(LaneDsn(config, lane), LaneSessionSettings(config, lane),
                                       config.database.reconnect_max_backoff);
}

}  // namespace

bool SameSession(const config::Config& a, const config::Config& b, Lane lane) {
  db::SessionSettings x = LaneSessionSettings(a, lane);
  db::SessionSettings y = LaneSessionSettings(b, lane);
  return LaneDsn(a, lane) == LaneDsn(b, lane) &&
         a.database.reconnect_max_backoff == b.database.reconnect_max_backoff &&
         x.application_name == y.application_name && x.connect_timeout == y.connect_timeout &&
         x.statement_timeout == y.statement_timeout && x.lock_timeout == y.lock_timeout &&
         x.read_only == y.read_only;
}

LaneSession::LaneSession(const config::Config& config, Lane lane,
                         std::function<void()> on_overdue)
    : lane_(lane),
      session_(MakeSession(config, lane)),
      watchdog_(std::make_unique<db::StatementWatchdog>(LaneName(lane), std::move(on_overdue))),
      facts_reader_(LaneName(lane)) {}

void LaneSession::Reconnect(const config::Config& config) {
  session_ = MakeSession(config, lane_);
  facts_reader_ = db::ServerFactsReader(LaneName(lane_));
}

void LaneSession::RunDue(const config::Config& config, const std::vector<ScheduledCheck*>& due,
                         const std::function<bool()>& stopping,
                         const std::function<void()>& stamp) {
  db::LocalSettings wanted{config.database.statement_timeout, config.database.lock_timeout};
  // One poll's query results: entries sharing one query and params cost one
  // execution, whichever of them runs first.
  db::QueryCache queries;
  bool ran_any = false;
  bool retried = false;
  // The check being run again after a recovery conflict (none: due.size()).
  std::size_t conflict_retry = due.size();
  for (std::size_t i = 0; i < due.size(); ++i) {
    if (stopping()) break;
    stamp();  // a long poll is progress too, check by check
    std::vector<ScheduledCheck*> rest(due.begin() + static_cast<long>(i), due.end());
    bool again = i == conflict_retry;
    if (ran_any && !session_->connected() && !again) {
      // Lost mid-poll: the rest could not run, and must not keep showing
      // their previous results. The next poll reconnects.
      FailAll(rest, db::FailureReason::kConnection, "lost the database connection");
      break;
    }
    pqxx::connection* connection = nullptr;
    try {
      connection = &session_->Connection();
    } catch (const std::exception& e) {
      FailAll(rest, db::FailureReason::kConnection, e.what());
      break;
    }
    // As the session was found when it connected (each connect probes).
    queries.set_named_statements(!session_->pooled());
    bool may_retry = !ran_any && !retried;
    watchdog_->Arm(session_->shared_connection(), Silence(*due[i]->check, wanted),
                   Budget(*due[i]->check, wanted));
    RunOutcome outcome =
        RunCheckTransaction(*connection, *due[i], queries, wanted, may_retry, !again);
    due[i]->status.incremental = due[i]->check->incremental_status();
    bool gave_up = watchdog_->Disarm();
    session_->CheckAfterError();
    if (outcome == RunOutcome::kLostBeforeStart && may_retry && (gave_up || stopping())) {
      RecordFailure(*due[i], db::FailureReason::kConnection,
                    gave_up ? "no answer in time; connection dropped" : "stopping", 0);
    } else if (outcome == RunOutcome::kLostBeforeStart && may_retry) {
      // The server closed the session while it was idle between polls
      // (idle_session_timeout, pg_terminate_backend, a restart): nothing of
      // this poll has run, so reconnect and run it now rather than report
      // the whole lane down until the next poll. Once: a second failure
      // goes through the reconnect backoff.
      log::Info("database session was closed while idle; reconnecting at once",
                {{"lane", LaneName(lane_)}});
      session_->Disconnect();
      retried = true;
      --i;
      continue;
    }
    ran_any = true;
    if (outcome == RunOutcome::kRecoveryConflict) {
      // Once more at once, in a new transaction and so a new snapshot; on a
      // new session if the conflict ended this one (the FATAL variant: the
      // next Connection() reconnects without backoff). The poll's cached
      // results go: the conflict is cached with the query that raised it.
      if (!session_->connected()) {
        log::Info("database session ended by a recovery conflict; reconnecting at once",
                  {{"lane", LaneName(lane_)}});
      }
      queries = db::QueryCache();
      conflict_retry = i;
      --i;
      continue;
    }
  }
}

std::optional<db::ServerFacts> LaneSession::ReadFacts(const std::function<bool()>& stopping,
                                                      std::string& unreachable) {
  auto timeout = session_->settings().statement_timeout;
  for (int attempt = 0; attempt < 2 && !stopping(); ++attempt) {
    pqxx::connection* connection = nullptr;
    try {
      connection = &session_->Connection();
    } catch (const std::exception& e) {
      unreachable = e.what();
      return std::nullopt;
    }
    // Two statements at most: the fallback without the server's identity.
    watchdog_->Arm(session_->shared_connection(), timeout + kWatchdogMargin,
                   timeout * 2 + kWatchdogMargin);
    std::optional<db::ServerFacts> facts;
    bool lost = false;
    try {
      facts = facts_reader_.Read(*connection);
    } catch (const std::exception& e) {
      lost = dynamic_cast<const pqxx::broken_connection*>(&e) != nullptr;
      log::Debug("cannot read the server facts", {{"lane", LaneName(lane_)}, {"error", e.what()}});
    }
    if (watchdog_->Disarm()) {
      if (!stopping()) unreachable = "no answer in time; connection dropped";
      session_->CheckAfterError();
      return std::nullopt;
    }
    session_->CheckAfterError();
    if (facts || !lost) return facts;
  }
  return std::nullopt;
}

}  // namespace seatwatch::poll
