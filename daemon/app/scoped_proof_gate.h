#pragma once

#include <set>
#include <string>

#include "config/config.h"

namespace seatwatch::app {

// The proof of the incremental entries' scoped_sql (checks::ProveScopedSql)
// where the checks lane reads, before the daemon starts and before it takes
// a reloaded config: a scoped query proved wrong is refused then, once,
// rather than merging wrong rows (or failing) every [changes] interval. It
// remembers what it proved, so that a reload proves only entries that
// changed. Not thread-safe (the daemon's signal thread alone calls it).
class ScopedProofGate {
 public:
  // Proves the incremental entries of `config` not proved before and logs
  // each finding. False when the database answered and an entry's scoped_sql
  // was proved wrong; true otherwise, also when nothing was proved because
  // the database did not answer within connect_timeout or the connection
  // broke (logged as a warning): the daemon then runs as it did without the
  // proof. A statement_timeout, or a scoped_sql that fails to run, is a
  // warning here: the check reports it as it runs.
  bool Admit(const config::Config& config);

 private:
  std::set<std::string> proved_;  // Signature() of the entries proved
};

}  // namespace seatwatch::app
