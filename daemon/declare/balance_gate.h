#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "declare/balance.h"
#include "declare/declaration.h"
#include "declare/metric_declaration.h"
#include "declare/sql_text.h"

namespace seatwatch::declare {

// The 64-bit hash of a row of alias t over `columns`, in their order, as
// every balance compares rows (NULL when one of them is NULL).
std::string RowHash(const std::vector<std::string>& columns);

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
//
// The tallies of declared metrics riding on the check are counted in the
// same scans (a column each); a table no entry balances gets a scan of its
// own for them, still one per table and key.
class BalanceGate {
 public:
  // `filter`: the keys the pass reads (every key for a full pass, $1 for
  // a scoped one); the scans and every exact reading keep to them.
  BalanceGate(const std::vector<Declaration>& declarations,
              const std::vector<MetricDeclaration>& metrics, KeyFilter filter);

  // What the gate reads, for RowTerms: each scan's aggregates, the
  // entries it gates and the tallies it counts.
  struct Count {
    std::string where;
    std::string sum;
  };
  struct Scan {
    std::string name;  // seatwatch_scan_N
    TableName table;
    std::vector<std::string> key;
    std::vector<BalanceSide> sides;     // side j: rows_j, hashed_j, hash_j
    std::vector<std::string> expiries;  // column e: expiry_e
    std::vector<Count> counts;          // count c: count_c
  };
  struct TallyAt {
    size_t scan;
    std::string column;  // count_c, or rows_j of a side that counts the same rows
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

  const std::vector<Scan>& scans() const { return scans_; }
  const std::vector<std::pair<std::string, Gated>>& gated() const { return gated_; }
  const std::vector<std::pair<std::string, std::vector<TallyAt>>>& tallies() const {
    return tallies_;
  }

  // No entry has a balance and no metric a tally: the pass is written as
  // before.
  bool empty() const { return scans_.empty(); }
  // "WITH ...,\n" (the scans and each entry's keys out of balance) to put
  // before the pass; "" when empty().
  std::string With() const;
  // The entry's violations (the key as its labels, then
  // seatwatch_violations) read through the gate; nullopt when the entry
  // is read as before.
  std::optional<std::string> Violations(const Declaration& declaration) const;
  // Each key's next moment of `expires`, when a scan of the gate reads the
  // entry's rows table by the entry's key: no scan of its own.
  // `tail`: the columns after seatwatch_next_expiry, all NULL
  // (compiled_check.h, ResultTail).
  std::optional<std::string> Expiry(const Declaration& declaration, const std::string& tail) const;

  // `metric`'s samples: "FROM ..." whose rows give each key as m.k1, m.k2,
  // ... (none NULL), each tally's name as t.tally and its count (0 where
  // none) as t.value, float8.
  std::string TallyFrom(const MetricDeclaration& metric) const;
  // Each key's next moment of a tally's `expires`, read from its scan;
  // "" when the metric has none or a declaration of the check already
  // reports that moment (`declarations`, as given to the constructor).
  std::string TallyExpiry(const MetricDeclaration& metric,
                          const std::vector<Declaration>& declarations,
                          const std::string& tail) const;
  // The tallies of `metric` whose `expires` no declaration (nor an earlier
  // tally) reports: each key's next moment of theirs is a row of its own.
  static std::vector<const Tally*> UnreportedExpiries(
      const MetricDeclaration& metric, const std::vector<Declaration>& declarations);

 private:
  SideAt Add(const BalanceSide& side);
  size_t ScanOf(const TableName& table, const std::vector<std::string>& key);
  // The column of `scan` counting `rows` (a tally's), added when none does.
  static std::string CountIn(Scan& scan, const RowSet& rows);
  void AddExpiry(const TableName& table, const std::vector<std::string>& key,
                 const std::string& expires);
  std::string ExpirySql(const TableName& table, const std::vector<std::string>& key,
                        const std::string& expires, const std::vector<std::string>& labels,
                        const std::string& what, const std::string& tail) const;
  std::string ScanSql(const Scan& scan) const;
  std::string UnbalancedSql(const Gated& gated) const;

  std::vector<Scan> scans_;
  KeyFilter filter_;
  std::vector<std::pair<std::string, Gated>> gated_;  // invariant -> its gate, in entry order
  std::vector<std::pair<std::string, std::vector<TallyAt>>> tallies_;  // metric -> each tally's count
};

}  // namespace seatwatch::declare
