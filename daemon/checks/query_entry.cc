#include "checks/query_entry.h"

#include <pqxx/prepared_statement>
#include <pqxx/result>

#include "db/failure.h"

namespace seatwatch::checks {

const char* EntrySection(const config::QueryConfig& entry) {
  return entry.kind == config::QueryConfig::Kind::kInvariant ? "invariant" : "metric";
}

metrics::ColumnBinding BindEntryColumns(const db::Rows& rows, const config::QueryConfig& entry) {
  try {
    return metrics::BindColumns(rows, entry.labels, entry.value, entry.invariant_column);
  } catch (const metrics::MissingColumn& e) {
    throw EntryMismatch(entry.KeyLocation(e.key()).Describe(std::string(EntrySection(entry)) +
                                                            "." + e.key()) +
                        ": " + e.what());
  }
}

std::string RowLimited(const std::string& sql, const config::QueryConfig& entry) {
  return "SELECT * FROM (\n" + sql + "\n) AS seatwatch_rows LIMIT " +
         std::to_string(static_cast<long long>(entry.max_rows) + 1);
}

std::string RowLimitedSql(const config::QueryConfig& entry) { return RowLimited(entry.sql, entry); }

void CheckRowLimit(const db::Rows& rows, const config::QueryConfig& entry) {
  CheckRowLimit(rows.values.size(), entry);
}

void CheckRowLimit(std::size_t rows, const config::QueryConfig& entry) {
  if (rows > static_cast<size_t>(entry.max_rows)) {
    throw db::DataError(db::FailureReason::kTooManyRows,
                        "the query returned more than max_rows = " +
                            std::to_string(entry.max_rows) +
                            " rows; nothing of it is exported (raise " + EntrySection(entry) +
                            ".max_rows if that many are expected)");
  }
}

BoundRows FetchEntryRows(CheckContext& context, const config::QueryConfig& entry) {
  BoundRows bound;
  // libpqxx 6.4 reads a whole result into memory before returning it: the
  // LIMIT makes the server stop after one row too many, so a query gone
  // wrong costs max_rows + 1 rows, not millions. Entries with the same SQL,
  // parameters and max_rows still share one execution.
  bound.rows = context.queries.Run(context.tx, RowLimitedSql(entry), entry.params);
  CheckRowLimit(*bound.rows, entry);
  bound.binding = BindEntryColumns(*bound.rows, entry);
  return bound;
}

void VerifyEntryColumns(pqxx::transaction_base& tx, const config::QueryConfig& entry) {
  std::string sql = "SELECT * FROM (\n" + entry.sql + "\n) AS seatwatch_verify LIMIT 0";
  db::Rows rows = db::ToRows(tx.exec_params(sql, pqxx::prepare::make_dynamic_params(entry.params)));
  BindEntryColumns(rows, entry);
}

}  // namespace seatwatch::checks
