#pragma once

#include <pqxx/connection>

namespace seatwatch::cleanup {

// Whether the server at the other end of `connection` is in recovery (a
// streaming standby): SELECT pg_is_in_recovery(), in autocommit, bounded by
// the session's statement_timeout. A standby can take the cleanup leader
// lock (advisory locks work in recovery) but cannot free a hold, so the
// worker asks this before the lock, on every run: a promotion flips it on
// the same connection. Throws what the connection throws.
bool InRecovery(pqxx::connection& connection);

}  // namespace seatwatch::cleanup
