#include "db/libpq_options.h"

namespace seatwatch::db {

LibpqOptions ParseLibpqOptions(const std::string& dsn, std::string* error) {
  char* message = nullptr;
  LibpqOptions options(PQconninfoParse(dsn.c_str(), &message));
  if (!options && error) {
    *error = message ? message : "out of memory";
    while (!error->empty() && error->back() == '\n') error->pop_back();
  }
  if (message) PQfreemem(message);
  return options;
}

}  // namespace seatwatch::db
