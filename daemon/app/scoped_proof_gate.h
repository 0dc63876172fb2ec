#pragma once

#include <chrono>
#include <set>
#include <string>

#include "config/config.h"

namespace seatwatch::app {

// The proof of the declared entries (checks::ProveDeclarations) and of the
// incremental entries' scoped_sql (checks::ProveScopedSql) where the checks
// lane reads, before the daemon starts and before it takes a reloaded
// config: a declaration naming a column that is not there, or a scoped query
// proved wrong, is refused then, once, rather than failing (or merging wrong
// rows) every poll. It
// remembers what it proved, so that a reload proves only entries that
// changed. Not thread-safe (the daemon's signal thread alone calls it).
// The longest the proof may hold the start or a reload: a database behind a
// stalled middlebox, or one that does not answer the startup packet, must not
// keep the daemon from serving /metrics and pinging the service manager's
// watchdog. Past it the daemon goes on unproved, as with a database that is
// down.
inline constexpr std::chrono::milliseconds kProofBudget{10000};

class ScopedProofGate {
 public:
  // Proves the declarations of `config` and its incremental entries not
  // proved before, and logs each finding. False when the database answered
  // and a declaration did not prove or an entry's scoped_sql was proved
  // wrong; true otherwise, also when nothing was proved because
  // the database did not answer (no connection within connect_timeout, a
  // broken connection, or no verdict within kProofBudget; logged as a
  // warning): the daemon then runs as it did without the proof. A
  // statement_timeout, or a scoped_sql that fails to run, is a warning here:
  // the check reports it as it runs.
  bool Admit(const config::Config& config);

 private:
  std::set<std::string> proved_;  // Signature() of the entries proved
};

}  // namespace seatwatch::app
