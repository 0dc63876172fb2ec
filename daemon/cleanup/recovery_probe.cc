#include "cleanup/recovery_probe.h"

#include <pqxx/nontransaction>

namespace seatwatch::cleanup {

bool InRecovery(pqxx::connection& connection) {
  pqxx::nontransaction tx(connection, "seatwatch_cleanup_recovery");
  return tx.exec1("SELECT pg_is_in_recovery()")[0].as<bool>();
}

}  // namespace seatwatch::cleanup
