#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include "checks/check.h"
#include "config/config.h"
#include "db/rows.h"
#include "metrics/row_mapping.h"

namespace seatwatch::checks {

// The result of an [[invariant]] or [[metric]] entry's SQL does not fit the
// entry (a missing column). Phrased like a config error: file:line: key.
class EntryMismatch : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class IncrementalRows;

struct BoundRows {
  // Null when `keyed` is set.
  std::shared_ptr<const db::Rows> rows;
  metrics::ColumnBinding binding;
  // An incremental entry whose key column is one of its labels (so that no
  // two keys share a series) and that has no rows without a key: the rows
  // as kept by key, for a check that rebuilds only what changed
  // (IncrementalRows::TakeChangedKeys); `binding` binds its columns.
  IncrementalRows* keyed = nullptr;
};

// The entry's SQL as it runs: `SELECT * FROM (sql) AS seatwatch_rows LIMIT
// max_rows + 1`.
std::string RowLimitedSql(const config::QueryConfig& entry);

// `sql` wrapped in the same row limit as RowLimitedSql.
std::string RowLimited(const std::string& sql, const config::QueryConfig& entry);

// Throws db::DataError (too_many_rows) for more than the entry's max_rows.
void CheckRowLimit(const db::Rows& rows, const config::QueryConfig& entry);
void CheckRowLimit(std::size_t rows, const config::QueryConfig& entry);

// Binds the entry's columns; throws EntryMismatch for a missing one.
metrics::ColumnBinding BindEntryColumns(const db::Rows& rows, const config::QueryConfig& entry);

// "invariant" or "metric", for messages naming a key of the entry.
const char* EntrySection(const config::QueryConfig& entry);

// Runs the entry's SQL through the poll's query cache and binds its columns.
// Throws db::DataError (too_many_rows) for more than max_rows rows,
// EntryMismatch for a missing column, and whatever the query threw.
BoundRows FetchEntryRows(CheckContext& context, const config::QueryConfig& entry);

// The same against a zero-row wrapper, for --check-config: proves the SQL
// parses with its parameters and returns the configured columns.
void VerifyEntryColumns(pqxx::transaction_base& tx, const config::QueryConfig& entry);

}  // namespace seatwatch::checks
