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

std::string QuoteLibpqValue(const std::string& value) {
  std::string out = "'";
  for (char c : value) {
    if (c == '\'' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('\'');
  return out;
}

}  // namespace seatwatch::db
