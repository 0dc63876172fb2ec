#include "locks/lock_metrics.h"

#include <algorithm>
#include <map>
#include <string>

#include "metrics/family.h"

namespace seatwatch::locks {

namespace {

using metrics::AddCounter;
using metrics::AddGauge;

const std::string kFromLastPoll = " Values come from the last lock poll, never from the scrape.";

std::string Help(const std::string& text) { return text + kFromLastPoll; }

// Series per label value, seeded with zeros for the values dashboards and
// alerts select on.
prometheus::MetricFamily ByLabel(const std::string& name, const std::string& help,
                                 const std::string& label, const std::vector<std::string>& zeros,
                                 const std::map<std::string, double>& values) {
  std::map<std::string, double> all(values);
  for (const auto& value : zeros) all.emplace(value, 0);
  auto family = metrics::GaugeFamily(name, Help(help));
  for (const auto& [value, number] : all) AddGauge(family, {{label, value}}, number);
  return family;
}

}  // namespace

std::vector<prometheus::MetricFamily> BuildLockFamilies(const LockPoll& poll,
                                                        const WaitEpisodes& episodes) {
  std::vector<prometheus::MetricFamily> out;
  out.push_back(metrics::SingleGauge(
      "seatwatch_lock_waiting_sessions",
      Help("Client sessions of the database waiting on a heavyweight lock."),
      static_cast<double>(poll.waits.size())));
  out.push_back(metrics::SingleGauge("seatwatch_lock_wait_max_seconds",
                                     Help("The longest current lock wait, in seconds (0: none)."),
                                     poll.MaxWaitSeconds()));

  std::map<std::string, double> roots;
  for (int pid : poll.forest.roots) roots[poll.StateOf(pid)] += 1;
  out.push_back(ByLabel("seatwatch_lock_blocking_roots",
                        "Sessions that block others and wait for nobody, by "
                        "pg_stat_activity.state (\"prepared transaction\" for a prepared "
                        "transaction). The forest itself: GET /api/locks.",
                        "state", {"active", "idle in transaction", "idle in transaction (aborted)"},
                        roots));
  out.push_back(metrics::SingleGauge(
      "seatwatch_lock_chain_max_depth",
      Help("The deepest blocking chain: 1 when every waiter is blocked directly by a root; "
           "sessions queued for one row count as one level. 0: nobody waits."),
      poll.forest.max_depth));
  out.push_back(metrics::SingleGauge(
      "seatwatch_lock_max_blocked_by_one_root",
      Help("The largest number of sessions held up, directly or through others, by one root "
           "blocker."),
      poll.forest.max_blocked_by_one_root));
  out.push_back(metrics::SingleGauge(
      "seatwatch_lock_hot_row_waiters",
      Help("Sessions queued for the single most contended row: those waiting for its tuple lock "
           "plus the queue's head, which waits for the row holder's transaction. A row shows "
           "once a second session queues for it; 0 until then."),
      poll.forest.hot_row_waiters));

  std::map<std::string, double> by_relation;
  for (const auto& [pid, wait] : poll.waits) {
    std::string relation = poll.RelationOf(pid);
    if (!relation.empty()) by_relation[relation] += 1;
  }
  out.push_back(ByLabel("seatwatch_lock_waiting_by_relation",
                        "Waiting sessions per relation, where known (a wait for a transaction "
                        "counts under the row's relation once others queue for the row); the "
                        "tables of [locks] resolve_rows are always present.",
                        "relation", poll.watched_relations, by_relation));

  auto waits_total = metrics::CounterFamily(
      "seatwatch_lock_waits_total",
      Help("Lock-wait episodes seen (a new pid and wait start) since seatwatch started. Waits "
           "that begin and end between two lock polls are not seen."));
  AddCounter(waits_total, {}, static_cast<double>(episodes.total()));
  out.push_back(std::move(waits_total));
  auto durations = metrics::HistogramFamily(
      "seatwatch_lock_wait_duration_seconds",
      Help("Durations of the lock-wait episodes seen to end: the wait at the last poll that "
           "showed it (a lower bound, short by up to one lock interval)."));
  episodes.durations().AddTo(durations);
  out.push_back(std::move(durations));

  std::map<std::string, double> sessions;
  std::map<std::string, double> oldest;
  for (const auto& row : poll.states) {
    std::string state = row.state.value_or("unknown");
    sessions[state] += row.sessions;
    if (row.oldest_xact_seconds) {
      oldest[state] = std::max(oldest[state], std::max(0.0, *row.oldest_xact_seconds));
    }
  }
  out.push_back(ByLabel("seatwatch_transaction_oldest_seconds",
                        "Age of the oldest open transaction of a client session of the "
                        "database, per pg_stat_activity.state, in seconds (0: none).",
                        "state", {"active", "idle in transaction", "idle in transaction (aborted)"},
                        oldest));
  out.push_back(ByLabel("seatwatch_sessions",
                        "Client sessions of the database per pg_stat_activity.state (seatwatch's "
                        "own excluded).",
                        "state",
                        {"active", "idle", "idle in transaction", "idle in transaction (aborted)"},
                        sessions));

  auto deadlocks = metrics::CounterFamily(
      "seatwatch_deadlocks_total",
      "Deadlocks detected in the database, from pg_stat_database.deadlocks (cumulative since the "
      "server's statistics were last reset). Each aborted one transaction with SQLSTATE 40P01." +
          kFromLastPoll);
  AddCounter(deadlocks, {}, poll.counters.deadlocks);
  out.push_back(std::move(deadlocks));
  auto rollbacks = metrics::CounterFamily(
      "seatwatch_xact_rollbacks_total",
      "Transactions rolled back in the database, from pg_stat_database.xact_rollback. It lumps "
      "serialization failures (SQLSTATE 40001) together with every other rollback: the server "
      "counts 40001 nowhere, so count retries in the application." +
          kFromLastPoll);
  AddCounter(rollbacks, {}, poll.counters.xact_rollback);
  out.push_back(std::move(rollbacks));
  return out;
}

}  // namespace seatwatch::locks
