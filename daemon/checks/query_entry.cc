#include "checks/query_entry.h"

#include <pqxx/prepared_statement>
#include <pqxx/result>

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

BoundRows FetchEntryRows(CheckContext& context, const config::QueryConfig& entry) {
  BoundRows bound;
  bound.rows = context.queries.Run(context.tx, entry.sql, entry.params);
  bound.binding = Bind(*bound.rows, entry);
  return bound;
}

void VerifyEntryColumns(pqxx::transaction_base& tx, const config::QueryConfig& entry) {
  std::string sql = "SELECT * FROM (\n" + entry.sql + "\n) AS seatwatch_verify LIMIT 0";
  db::Rows rows = db::ToRows(tx.exec_params(sql, pqxx::prepare::make_dynamic_params(entry.params)));
  Bind(rows, entry);
}

}  // namespace seatwatch::checks
