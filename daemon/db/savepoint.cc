#include "db/savepoint.h"

namespace seatwatch::db {

Savepoint::Savepoint(pqxx::transaction_base& tx, std::string name)
    : tx_(tx), name_(std::move(name)) {
  tx_.exec0("SAVEPOINT " + name_);
}

Savepoint::~Savepoint() {
  if (done_) return;
  try {
    tx_.exec0("ROLLBACK TO SAVEPOINT " + name_);
  } catch (...) {
  }
}

void Savepoint::Release() {
  tx_.exec0("RELEASE SAVEPOINT " + name_);
  done_ = true;
}

}  // namespace seatwatch::db
