#include "db/local_settings.h"

namespace seatwatch::db {

std::string SetLocalSql(const LocalSettings& settings) {
  return "SET LOCAL statement_timeout = " + std::to_string(settings.statement_timeout.count()) +
         "; SET LOCAL lock_timeout = " + std::to_string(settings.lock_timeout.count()) +
         "; SET LOCAL jit = off; SET LOCAL extra_float_digits = 1";
}

void SetLocal(pqxx::transaction_base& tx, const LocalSettings& settings) {
  tx.exec0(SetLocalSql(settings));
}

}  // namespace seatwatch::db
