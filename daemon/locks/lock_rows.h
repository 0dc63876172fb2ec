#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace seatwatch::locks {

// Plain rows as the lock reads return them, so that everything after the
// fetch is pure code fed by hand in unit tests.

// One backend of pg_stat_activity (seatwatch's own excluded). The poll reads
// only the sessions in the forest: the waiters and whoever blocks them.
struct SessionRow {
  int pid = 0;
  std::string backend_type;
  bool client = false;       // backend_type = 'client backend'
  bool in_database = false;  // connected to the monitored database
  std::optional<std::string> state;
  std::string wait_event_type;
  std::string wait_event;
  std::string application_name;
  std::string usename;
  std::optional<std::string> client_addr;  // null: unix socket or internal
  std::optional<double> xact_age_seconds;  // null: no open transaction
  std::optional<double> state_age_seconds;
  std::optional<std::int64_t> state_change_us;  // Unix microseconds
  // As [locks] show_query says (normalized by default), then cut to
  // query_max_length; null when hidden (show_query = "none").
  std::optional<std::string> query;
};

// The client sessions of the monitored database in one pg_stat_activity.state,
// counted by the server (the idle majority never crosses the wire).
struct SessionStateRow {
  std::optional<std::string> state;  // null: hidden (no pg_read_all_stats)
  int sessions = 0;
  std::optional<double> oldest_xact_seconds;  // null: none has a transaction open
};

// The one lock a waiting session waits for (pg_locks, granted = false).
struct LockWaitRow {
  int pid = 0;
  std::string locktype;
  std::string mode;
  std::optional<std::uint32_t> relation;  // only for the monitored database
  std::string relation_name;              // regclass text, empty when unknown
  std::optional<std::int64_t> page;
  std::optional<std::int64_t> tuple;
  std::string target;  // every lock tag field: equal targets share one queue
  // From pg_locks.waitstart (PostgreSQL 14+); filled from state_change
  // otherwise (see ApplyWaitStartFallback).
  std::optional<double> wait_seconds;
  std::optional<std::int64_t> wait_start_us;
  std::vector<int> blockers;  // pg_blocking_pids()
};

// Cumulative counters of pg_stat_database for the monitored database.
struct DatabaseCounters {
  double deadlocks = 0;
  double xact_rollback = 0;
};

// Everything the one statement of a lock poll returns.
struct LockPollRows {
  std::vector<SessionRow> sessions;  // the waiters and their blockers
  std::vector<LockWaitRow> waits;    // the lock each waiter waits for
  std::vector<SessionStateRow> states;
  DatabaseCounters counters;
};

// A table of [locks] resolve_rows as the server knows it.
struct TableRow {
  std::uint32_t oid = 0;
  std::string name;  // oid::regclass::text: quoted and qualified as needed
};

// A primary key column: its name for display, quoted for SQL.
struct KeyColumn {
  std::string name;
  std::string quoted;
};

}  // namespace seatwatch::locks
