#pragma once

#include <string>

#include <pqxx/transaction_base>

namespace seatwatch::db {

// A savepoint inside an open transaction: released by Release(), rolled back
// to by the destructor otherwise, so that a failed statement (a timeout, an
// SQL error) does not abort the whole transaction and the statements after
// it still run on the same snapshot. Errors while rolling back are ignored:
// they mean the connection is gone, which the caller sees on its next use.
class Savepoint {
 public:
  Savepoint(pqxx::transaction_base& tx, std::string name);
  ~Savepoint();
  Savepoint(const Savepoint&) = delete;
  Savepoint& operator=(const Savepoint&) = delete;

  void Release();

 private:
  pqxx::transaction_base& tx_;
  std::string name_;
  bool done_ = false;
};

}  // namespace seatwatch::db
