#pragma once

#include <set>
#include <string>
#include <vector>

#include <pqxx/transaction_base>

#include "config/config.h"

namespace seatwatch::checks {

// What proving the declared entries ([[invariant]] with `kind`) against the
// database's catalog found, one line per finding, each
// `path:line:col: invariant.<field>: ...` at the key the finding is about.
struct DeclaredProof {
  // A table or column that does not exist, a column of the wrong type, a
  // where / condition / sum that does not compile or is not boolean
  // (numeric), columns that do not compare: a config error.
  std::vector<std::string> errors;
  // What works but costs: a key that a table's replica identity does not
  // carry (a delete then costs a full pass) with the ALTER TABLE to run; a
  // large table with no index that starts with its key column (each recheck
  // reads all of it) with the CREATE INDEX to run.
  std::vector<std::string> warnings;
  // One line per entry proved.
  std::vector<std::string> proved;
  // The checks with an error: their compiled SQL would fail the same way,
  // less precisely, so the caller does not run it.
  std::set<std::string> failed_checks;
};

// Below this many rows (pg_class.reltuples) a table without an index on its
// key column is read whole by a recheck at little cost: no advice.
inline constexpr double kIndexAdviceRows = 10000;

// Proves every declared entry of `config` in `tx` (a read-only transaction;
// each statement runs under a savepoint of its own, as `LIMIT 0` or a
// catalog read, so nothing is scanned): each table and column exists, the
// limit and counter columns are numbers, `expires` is a timestamp, the
// operator's expressions compile on their table (where and condition as
// booleans, sum as a number), and paired columns compare. With [changes] on,
// also each table's replica identity and key index (warnings). Rethrows
// pqxx::broken_connection.
DeclaredProof ProveDeclarations(pqxx::transaction_base& tx, const config::Config& config);

}  // namespace seatwatch::checks
