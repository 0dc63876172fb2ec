#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <pqxx/transaction_base>

#include "config/config.h"

namespace seatwatch::checks {

// What proving the scoped_sql of the incremental entries found, one line per
// finding, each `path:line:col: invariant.scoped_sql: ...` (or metric.).
struct ScopedProof {
  // Proved wrong: rows for no keys, or rows other than sql's for the keys
  // asked for. A config error: --check-config exits 2, the daemon does not
  // start, a reload is refused.
  std::vector<std::string> refuted;
  // scoped_sql did not run (an SQL error other than a timeout): an error for
  // --check-config; the daemon's checks report it as they run.
  std::vector<std::string> failed;
  // A part of a proof left out: a statement that ran over statement_timeout
  // or lock_timeout, a full pass that failed.
  std::vector<std::string> warnings;
  // An entry whose sql returned no key to compare with: (a) alone proved.
  std::vector<std::string> notes;
  // An entry proved: what was compared; and its index in the entries.
  std::vector<std::string> proved;
  std::vector<std::size_t> proved_entries;
};

// Keys sampled from a full pass for part (b).
inline constexpr std::size_t kProofKeys = 5;

// Proves, on the database, that each incremental entry's scoped_sql (in
// `entries`; the others are skipped) reads what its sql reads:
//  (a) with $1 = '{}' it returns no rows (a scoped query without its key
//      filter returns rows here);
//  (b) with $1 = up to kProofKeys keys sampled from the rows of the entry's
//      sql, it returns exactly sql's rows of those keys (ScopedRowsDiffer).
// scoped_sql gets $1 as a text[] literal, then the entry's params, as its
// rechecks do. Runs in `tx`, which the caller opened REPEATABLE READ READ
// ONLY with its SET LOCALs, so that both queries read one snapshot; every
// statement under a savepoint of its own. Entries with the same sql and
// params share one full pass. Rethrows pqxx::broken_connection; every other
// failure is a finding. Not thread-safe with other users of `tx`.
ScopedProof ProveScopedSql(pqxx::transaction_base& tx,
                           const std::vector<config::QueryConfig>& entries);

}  // namespace seatwatch::checks
