#pragma once

#include <exception>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <pqxx/transaction_base>

#include "db/lazy_transaction.h"
#include "db/rows.h"

namespace seatwatch::db {

// Runs parameterised SQL and remembers each result (or failure) by SQL text
// and parameters, so that several entries naming the same query cost the
// database one execution per poll. Lives for one poll, whose checks each run
// in a transaction of their own; `tx` is the transaction of the check asking
// (a result cached by an earlier check of the poll is reused as it is, read
// in that check's transaction), begun only when a statement has to run.
// Not thread-safe.
class QueryCache {
 public:
  // Throws whatever the query threw, also on a repeated request.
  std::shared_ptr<const Rows> Run(LazyTransaction& tx, const std::string& sql,
                                  const std::vector<std::string>& params);
  // The same, with `tag` part of what identifies the result but not sent:
  // incremental checks name the pending transactions their snapshot saw, so
  // that a result is shared only by checks that agree on them.
  std::shared_ptr<const Rows> Run(LazyTransaction& tx, const std::string& sql,
                                  const std::vector<std::string>& params, const std::string& tag);
  // The same for a statement that polls run again and again with other
  // parameters (an incremental check's read of changed rows, every cycle):
  // on a direct session it runs as a named prepared statement
  // (db::PrepareOn), parsed and planned once per session, a generic plan
  // after a few runs; through a pooler (named_statements(false)) as Run().
  std::shared_ptr<const Rows> RunRepeated(LazyTransaction& tx, const std::string& sql,
                                          const std::vector<std::string>& params,
                                          const std::string& tag);

  // Whether the poll's session keeps what it is told beyond a transaction
  // (a direct session), so that RunRepeated may name its statements.
  void set_named_statements(bool allowed) { named_statements_ = allowed; }

  int executions() const { return executions_; }

 private:
  using Key = std::tuple<std::string, std::vector<std::string>, std::string>;
  struct Entry {
    std::shared_ptr<const Rows> rows;
    std::exception_ptr error;
  };
  std::shared_ptr<const Rows> Execute(LazyTransaction& tx, const std::string& sql,
                                      const std::vector<std::string>& params,
                                      const std::string& tag, bool named);

  std::map<Key, Entry> entries_;
  int executions_ = 0;
  bool named_statements_ = false;
};

}  // namespace seatwatch::db
