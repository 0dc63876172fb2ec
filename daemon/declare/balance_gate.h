#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "declare/balance.h"
#include "declare/declaration.h"
#include "declare/sql_text.h"

namespace seatwatch::declare {

// What makes a check's full pass about as cheap as counting: the entries
// whose kind has a Balance (exists) are not read row by row over every
// key. One scan of each table, grouped by key, counts and hashes every
// side that entries read there (all sides of one table in the same scan);
// a key whose two sides hold the same number of rows, none with a NULL
// compared column, and the same sum of 64-bit hashes of the compared
// columns, has no violation of that entry (two different sets of rows
// with the same sum: about 1 in 2^64). Only the keys out of balance,
// normally none, are read exactly, each through the indexes on its key.
// The booking pack's reconciliation.sql does the same by hand.
//
// A key whose columns hold a NULL matches nothing, so its rows are all
// violations: counted from the scan, with no exact reading.
//
// A `unique` entry rides on a balanced pair too, when its rows are one side
// of it and the other side's table has a unique index (no predicate, no
// expression) on columns its columns pair with: a key that balances holds
// the same rows on both sides, and the index keeps those distinct. The
// index is looked up in the catalog by the pass itself; without one the
// entry reads every key exactly, as it would with no gate.
class BalanceGate {
 public:
  // `filter`: the keys the pass reads (every key for a full pass, $1 for
  // a scoped one); the scans and every exact reading keep to them.
  BalanceGate(const std::vector<Declaration>& declarations, KeyFilter filter);

  // No entry of the check has a balance: the pass is written as before.
  bool empty() const { return gated_.empty(); }
  // "WITH ...,\n" (the scans and each entry's keys out of balance) to put
  // before the pass; "" when empty().
  std::string With() const;
  // The entry's violations (the key as its labels, then
  // seatwatch_violations) read through the gate; nullopt when the entry
  // is read as before.
  std::optional<std::string> Violations(const Declaration& declaration) const;
  // Each key's next moment of `expires`, when a scan of the gate reads the
  // entry's rows table by the entry's key: no scan of its own.
  std::optional<std::string> Expiry(const Declaration& declaration) const;

 private:
  struct Scan {
    std::string name;  // seatwatch_scan_N
    TableName table;
    std::vector<std::string> key;
    std::vector<BalanceSide> sides;     // side j: rows_j, hashed_j, hash_j
    std::vector<std::string> expiries;  // column e: expiry_e
  };
  struct SideAt {
    size_t scan;
    size_t side;
  };
  struct Gated {
    SideAt rows;
    SideAt in;
    std::string unbalanced;  // seatwatch_unbalanced_N
    // A unique entry's: the CTE that says whether a unique index keeps the
    // `in` side's rows distinct, and its SQL; empty for exists entries.
    std::string proof;
    std::string proof_sql;
  };

  SideAt Add(const BalanceSide& side);
  std::string ScanSql(const Scan& scan) const;
  std::string UnbalancedSql(const Gated& gated) const;

  std::vector<Scan> scans_;
  KeyFilter filter_;
  std::vector<std::pair<std::string, Gated>> gated_;  // invariant -> its gate, in entry order
};

}  // namespace seatwatch::declare
