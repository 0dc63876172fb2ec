#include "checks/query_entry.h"

#include <pqxx/prepared_statement>
#include <pqxx/result>

#include "db/failure.h"

namespace seatwatch::checks {

namespace {

const char* Section(const config::QueryConfig& entry) {
  return entry.kind == config::QueryConfig::Kind::kInvariant ? "invariant" : "metric";
}

metrics::ColumnBinding Bind(const db::Rows& rows, const config::QueryConfig& entry) {
  try {
    return metrics::BindColumns(rows, entry.labels, entry.value, entry.invariant_column);
  } catch (const metrics::MissingColumn& e) {
    throw EntryMismatch(entry.KeyLocation(e.key()).Describe(std::string(Section(entry)) + "." +
                                                            e.key()) +
                        ": " + e.what());
  }
}

}  // namespace

std::string RowLimitedSql(const config::QueryConfig& entry) {
  return "SELECT * FROM (\n" + entry.sql + "\n) AS seatwatch_rows LIMIT " +
         std::to_string(static_cast<long long>(entry.max_rows) + 1);
}

BoundRows FetchEntryRows(CheckContext& context, const config::QueryConfig& entry) {
  BoundRows bound;
  // libpqxx 6.4 reads a whole result into memory before returning it: the
  // LIMIT makes the server stop after one row too many, so a query gone
  // wrong costs max_rows + 1 rows, not millions. Entries with the same SQL,
  // parameters and max_rows still share one execution.
  bound.rows = context.queries.Run(context.tx, RowLimitedSql(entry), entry.params);
  if (bound.rows->values.size() > static_cast<size_t>(entry.max_rows)) {
    throw db::DataError(db::FailureReason::kTooManyRows,
                        "the query returned more than max_rows = " +
                            std::to_string(entry.max_rows) +
                            " rows; nothing of it is exported (raise " + Section(entry) +
                            ".max_rows if that many are expected)");
  }
  bound.binding = Bind(*bound.rows, entry);
  return bound;
}

void VerifyEntryColumns(pqxx::transaction_base& tx, const config::QueryConfig& entry) {
  std::string sql = "SELECT * FROM (\n" + entry.sql + "\n) AS seatwatch_verify LIMIT 0";
  db::Rows rows = db::ToRows(tx.exec_params(sql, pqxx::prepare::make_dynamic_params(entry.params)));
  Bind(rows, entry);
}

}  // namespace seatwatch::checks
