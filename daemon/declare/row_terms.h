#pragma once

#include <optional>
#include <string>
#include <vector>

#include "declare/declaration.h"
#include "declare/metric_declaration.h"

namespace seatwatch::declare {

// What each row of a declared check's tables adds to the check's rows of
// its key, so that a key's rows can be kept row by row (checks/RowLedger):
// a recheck then reads the rows that changed, by their replica identity,
// instead of every row of the key. The aggregates of the check's balance
// gate (counts, sums of 64-bit hashes, earliest expiry) and an at_most
// entry's group counts are sums over rows; so is every tally of a metric
// riding on the check. What the pass makes of them for a key whose sides
// balance (no violation of a gated entry, an at_most's groups over their
// limit, the next expiry, the tallies) is then known without the database,
// and a key out of balance is read exactly by the check's scoped SQL as
// before.
//
// A check takes this form only when everything it computes is such a sum
// (see Compile): otherwise `not_row_wise` says why and the check's rechecks
// read each key whole.
struct RowTerms {
  // One table as the gate's scan of it reads it, by the key's column there.
  // Each row yields `terms` (SQL over alias t, each cast to text), in this
  // order: per side its flags and hash, per count its flag, per expiry its
  // moment and whether it is still ahead, per at_most group its flag and
  // group columns.
  struct Table {
    TableName table;
    std::string key;  // the key's column in this table
    struct Side {
      int rows = -1;    // flag: the row is one of the side's (`where`)
      int hashed = -1;  // flag: and none of its compared columns is NULL; -1: key alone
      int hash = -1;    // its 64-bit hash (bigint), NULL when one is NULL; -1: key alone
    };
    std::vector<Side> sides;
    std::vector<int> counts;  // flag of each count
    struct Expiry {
      std::string column;
      int epoch = -1;   // float8 seconds, NULL when the column is
      int future = -1;  // flag: column > now()
    };
    std::vector<Expiry> expiries;
    std::vector<std::string> terms;
  };
  std::vector<Table> tables;

  // The check's result columns: the key's label, seatwatch_invariant,
  // seatwatch_violations, seatwatch_next_expiry, each metric's tally label
  // (`tail_labels`), each metric's value column.
  std::vector<std::string> tail_labels;

  // What a key's rows are made of, in the order the pass returns them.
  struct Gate {  // an entry gated by a balance: balanced, it has no violation
    std::string invariant;
    std::size_t rows_table = 0, rows_side = 0, in_table = 0, in_side = 0;
    int proof = -1;  // a unique entry's: index into `proofs`, which must hold
  };
  struct Limit {  // at_most, a fixed limit, rows counted
    std::string invariant;
    std::size_t table = 0;
    int flag = -1;            // the row counts (`where`, group columns not NULL)
    std::vector<int> groups;  // its group columns other than the key, as text
    double limit = 0;
  };
  struct Violations {
    std::optional<Gate> gate;
    std::optional<Limit> limit;
  };
  std::vector<Violations> violations;  // one per entry, in entry order
  struct ExpiryAt {
    std::size_t table = 0;
    std::size_t expiry = 0;
  };
  struct Metric {
    std::string label;  // its tally label's column
    struct TallyAt {
      std::string name;
      std::size_t table = 0;
      int flag = -1;
    };
    std::vector<TallyAt> tallies;
    std::vector<std::size_t> tables;  // a key has samples when it has rows in one of them
    std::vector<ExpiryAt> expiries;   // rows after the metric's
  };
  std::vector<ExpiryAt> expiries;  // after the entries' rows
  std::vector<Metric> metrics;
  // SQL of each proof that a unique index keeps a side distinct ("SELECT
  // EXISTS (...) AS proven").
  std::vector<std::string> proofs;

  // Empty when the check takes this form; else why not.
  std::string not_row_wise;
};

// The row terms of a check with these entries and metrics (validated, one
// key column), or why it cannot be kept row by row: an entry whose kind is
// not gated by a balance nor at_most with a fixed limit and counted rows, an
// expiry not read from a scan, a tally that sums.
RowTerms CompileRowTerms(const std::vector<Declaration>& declarations,
                         const std::vector<MetricDeclaration>& metrics);

}  // namespace seatwatch::declare
