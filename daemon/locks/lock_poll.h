#pragma once

#include <map>
#include <string>
#include <vector>

#include "locks/blocking_forest.h"
#include "locks/lock_rows.h"
#include "locks/wait_episodes.h"

namespace seatwatch::locks {

// Everything one lock poll read and worked out, from which the metrics, the
// JSON, the report and the log lines are made. A plain value; the functions
// below are pure.
struct LockPoll {
  std::map<int, SessionRow> sessions;  // the waiters and their live blockers, by pid
  std::map<int, LockWaitRow> waits;    // waiting client sessions of the database, by pid
  std::vector<SessionStateRow> states;  // every client session of the database, counted
  Forest forest;
  std::map<std::string, std::string> rows;  // row target -> "seats(event_id=1, seat=A12)"
  std::vector<std::string> watched_relations;  // resolve_rows tables that exist
  DatabaseCounters counters;
  std::string wait_start_source;  // "waitstart" or "state_change"
  double timestamp_seconds = 0;   // Unix time of the poll

  // The session, or nullptr (a blocker that ended, a prepared transaction).
  const SessionRow* Session(int pid) const;
  const LockWaitRow* Wait(int pid) const;
  double WaitSeconds(int pid) const;
  // The relation a session waits on: its lock's, or for a row queue's head
  // (which waits on a transaction) the row's. Empty when unknown.
  std::string RelationOf(int pid) const;
  // The row a session queues for, shown by key if resolved; empty if none.
  std::string HotRowOf(int pid) const;
  // The state label of a blocker: pg_stat_activity.state, "prepared
  // transaction" for pid 0, "unknown" otherwise.
  std::string StateOf(int pid) const;
  // The root (or cycle member) a waiter's drawn chain ends at.
  int RootOf(int pid) const;
  double MaxWaitSeconds() const;
};

// Turns the rows of one lock read into a poll: sessions and waits by pid,
// wait times from state_change where pg_locks had none, and the forest.
// Blockers whose session was not returned had ended before the read and are
// left out of the forest. Leaves `rows` (hot-row names), `watched_relations`
// and `timestamp_seconds` to the caller.
LockPoll AssembleLockPoll(LockPollRows rows, bool has_waitstart);

// Fills wait_seconds from state_change where pg_locks had no waitstart:
// servers before 14 (then wait_start_us too, so episodes are told apart by
// statement), or the first instant of a wait on 14+ (then the episode waits
// for its real start, next poll).
void ApplyWaitStartFallback(std::map<int, LockWaitRow>& waits,
                            const std::map<int, SessionRow>& sessions, bool has_waitstart);

std::vector<Waiter> ToWaiters(const std::map<int, LockWaitRow>& waits);
std::vector<WaitSample> ToSamples(const std::map<int, LockWaitRow>& waits);

}  // namespace seatwatch::locks
