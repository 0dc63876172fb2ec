#pragma once

#include <cstdint>

#include <pqxx/connection>

namespace seatwatch::cleanup {

// The lock that makes one seatwatch, among all that watch a database, the
// one that frees holds: a session-level advisory lock taken with
// pg_try_advisory_lock on the cleanup's own connection, so that it lasts as
// long as that connection and no longer. An instance that loses its
// connection loses the lock with it (the server releases it when the
// backend ends), and another instance takes it at its next try.
//
// The key is fixed: 8315159439856464995 = 0x7365617477617463, the ASCII bytes
// of "seatwatc". In pg_locks it shows as locktype 'advisory', classid
// 1936023924, objid 2002875491, objsubid 1. Advisory locks are per database,
// so instances watching different databases of one cluster do not compete.
//
// Needs a real session: through a transaction-pooling bouncer, the lock would
// stay on whichever server connection ran the statement, and two instances
// could both believe they lead. CleanupWorker never asks through a pooler.
//
// Not thread-safe: the cleanup worker's thread only.
class CleanupLeader {
 public:
  static constexpr std::int64_t kLockKey = 0x7365617477617463;

  // Asks the server whether this connection's backend holds the lock and, if
  // it does not, tries to take it (never waits). Returns whether it holds it
  // now. Checking pg_locks rather than trusting memory means a reconnect
  // (a new backend, which holds nothing) can never be mistaken for the
  // leader. Throws on database errors.
  bool Ensure(pqxx::connection& connection);
};

}  // namespace seatwatch::cleanup
