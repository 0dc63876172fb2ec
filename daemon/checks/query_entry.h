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

struct BoundRows {
  std::shared_ptr<const db::Rows> rows;
  metrics::ColumnBinding binding;
};

// Runs the entry's SQL through the poll's query cache and binds its columns.
// Throws EntryMismatch for a missing column, and whatever the query threw.
BoundRows FetchEntryRows(CheckContext& context, const config::QueryConfig& entry);

// The same against a zero-row wrapper, for --check-config: proves the SQL
// parses with its parameters and returns the configured columns.
void VerifyEntryColumns(pqxx::transaction_base& tx, const config::QueryConfig& entry);

}  // namespace seatwatch::checks
