#include "db/liveness.h"

#include <pqxx/except>

namespace seatwatch::db {

bool StillConnected(pqxx::connection& connection) {
  if (!connection.is_open()) return false;
  try {
    // PQconsumeInput underneath: no statement, no result, no waiting.
    connection.get_notifs();
  } catch (const pqxx::broken_connection&) {
    return false;
  }
  return connection.is_open();
}

}  // namespace seatwatch::db
