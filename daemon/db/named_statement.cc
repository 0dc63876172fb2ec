#include "db/named_statement.h"

namespace seatwatch::db {

void PrepareOn(pqxx::connection& connection, const std::string& name, const std::string& sql) {
  connection.prepare(name, sql);
}

}  // namespace seatwatch::db
