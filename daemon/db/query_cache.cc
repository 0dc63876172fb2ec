#include "db/query_cache.h"

#include <pqxx/prepared_statement>
#include <pqxx/result>

#include "db/named_statement.h"

namespace seatwatch::db {

std::shared_ptr<const Rows> QueryCache::Run(LazyTransaction& tx, const std::string& sql,
                                            const std::vector<std::string>& params) {
  return Run(tx, sql, params, std::string());
}

std::shared_ptr<const Rows> QueryCache::Run(LazyTransaction& tx, const std::string& sql,
                                            const std::vector<std::string>& params,
                                            const std::string& tag) {
  return Execute(tx, sql, params, tag, false);
}

std::shared_ptr<const Rows> QueryCache::RunRepeated(LazyTransaction& tx, const std::string& sql,
                                                    const std::vector<std::string>& params,
                                                    const std::string& tag) {
  return Execute(tx, sql, params, tag, named_statements_);
}

std::shared_ptr<const Rows> QueryCache::Execute(LazyTransaction& tx, const std::string& sql,
                                                const std::vector<std::string>& params,
                                                const std::string& tag, bool named) {
  Key key{sql, params, tag};
  auto it = entries_.find(key);
  if (it != entries_.end()) {
    if (it->second.error) std::rethrow_exception(it->second.error);
    return it->second.rows;
  }
  Entry& entry = entries_[key];
  try {
    pqxx::transaction_base& begun = tx.Get();
    // The statement's round trip and the reading of its rows (the BEGIN
    // counted itself).
    DatabaseTimer timed(tx);
    ++executions_;
    // Always the extended protocol: one statement per file, never a batch.
    auto values = pqxx::prepare::make_dynamic_params(params);
    if (named) {
      std::string name = StatementName(sql);
      PrepareOn(begun.conn(), name, sql);
      entry.rows = std::make_shared<const Rows>(ToRows(begun.exec_prepared(name, values)));
    } else {
      entry.rows = std::make_shared<const Rows>(ToRows(begun.exec_params(sql, values)));
    }
  } catch (...) {
    entry.error = std::current_exception();
    throw;
  }
  return entry.rows;
}

}  // namespace seatwatch::db
