#pragma once

#include <string>
#include <vector>

#include "declare/declaration.h"

namespace seatwatch::declare {

// One side of a balance: the rows of `table` that pass `where`, grouped by
// the key's columns in that table, compared by `columns` (the others).
struct BalanceSide {
  TableName table;
  std::vector<std::string> key;      // the key's columns in this table, in key order
  std::vector<std::string> columns;  // the compared columns that are not the key, in order
  std::string where;                 // empty: every row
};

// Two sides that hold the same rows, key by key, whenever a kind's
// invariant holds with no violation to find: an exists entry's rows and
// the rows it looks in. Counted and hashed in one scan of each table, they
// tell the keys where nothing can be wrong (normally all of them) from
// those that need the exact, row-by-row reading.
struct Balance {
  BalanceSide rows;
  BalanceSide in;
};

}  // namespace seatwatch::declare
