#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "db/rows.h"

namespace seatwatch::checks {

// The pure half of the proof that an incremental entry's scoped_sql reads
// what its sql reads (checks/scoped_proof.h runs the statements): which keys
// to ask for, and whether the rows that came back are the right ones. No
// database, no state: safe on any thread.

// The columns the proof compares, each once: the entry's labels (the key
// among them), its value, its invariant column and its expiry column (when
// it has them): every column of a row that the entry turns into a sample.
std::vector<std::string> ComparedColumns(const config::QueryConfig& entry);

// Up to `count` distinct non-NULL values of `key_column` in `full`, spread
// evenly over those values in order (integers by value, then the rest in
// text order; the first and the last among them), so that a scoped query
// right for low keys only is still caught.
// Empty when `full` has no such column or no row with a key.
std::vector<std::string> SampleKeys(const db::Rows& full, const std::string& key_column,
                                    std::size_t count);

// Why `scoped`, the rows of scoped_sql run with $1 = '{}', is wrong: any row
// at all. Nullopt when it returned none.
std::optional<std::string> RowsForNoKeys(const config::QueryConfig& entry, const db::Rows& scoped);

// Why `scoped`, the rows of scoped_sql run with $1 = `keys`, are not the rows
// of `full` (the entry's sql on the same snapshot) for those keys: a compared
// column it does not return, a row of a key it was not asked for (or of no
// key), or, for the first key where they differ, the rows of the one that the
// other lacks. The rows of each key are compared as a multiset (order does
// not matter, duplicates do) on ComparedColumns. Nullopt when they agree.
// `full` must return every compared column (the fetch checks that first).
std::optional<std::string> ScopedRowsDiffer(const config::QueryConfig& entry, const db::Rows& full,
                                            const db::Rows& scoped,
                                            const std::vector<std::string>& keys);

}  // namespace seatwatch::checks
