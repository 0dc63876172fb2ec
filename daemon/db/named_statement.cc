#include "db/named_statement.h"

#include <map>
#include <mutex>

namespace seatwatch::db {

void PrepareOn(pqxx::connection_base& connection, const std::string& name, const std::string& sql) {
  connection.prepare(name, sql);
}

std::string StatementName(const std::string& sql) {
  static std::mutex mutex;
  static std::map<std::string, std::string> names;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = names.find(sql);
  if (it == names.end()) {
    it = names.emplace(sql, "seatwatch_repeated_" + std::to_string(names.size() + 1)).first;
  }
  return it->second;
}

}  // namespace seatwatch::db
