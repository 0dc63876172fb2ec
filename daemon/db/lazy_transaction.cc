#include "db/lazy_transaction.h"

#include <utility>

namespace seatwatch::db {

LazyTransaction::LazyTransaction(Open open, Prepare prepare)
    : open_(std::move(open)), prepare_(std::move(prepare)) {}

LazyTransaction::LazyTransaction(pqxx::transaction_base& open) : tx_(&open) {}

pqxx::transaction_base& LazyTransaction::Get() {
  if (tx_) return *tx_;
  DatabaseTimer timed(*this);
  try {
    owned_ = open_();
  } catch (...) {
    failed_to_begin_ = true;
    throw;
  }
  tx_ = owned_.get();
  if (prepare_) prepare_(*tx_);
  return *tx_;
}

void LazyTransaction::Commit() {
  if (!tx_) return;
  DatabaseTimer timed(*this);
  tx_->commit();
}

}  // namespace seatwatch::db
