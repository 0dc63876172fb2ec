#pragma once

#include <libpq-fe.h>

#include <memory>
#include <string>

namespace seatwatch::db {

struct LibpqOptionsDeleter {
  void operator()(PQconninfoOption* options) const { PQconninfoFree(options); }
};
// libpq's parse of a DSN: an array of options ended by a null keyword.
using LibpqOptions = std::unique_ptr<PQconninfoOption, LibpqOptionsDeleter>;

// PQconninfoParse, or null when libpq refuses the DSN; then `error` (if given)
// receives libpq's message without its trailing newline. That message may
// quote the DSN, secrets included: scrub it before it is shown anywhere.
LibpqOptions ParseLibpqOptions(const std::string& dsn, std::string* error = nullptr);

// `value` in single quotes, its quotes and backslashes escaped, as a
// key=value conninfo string reads it.
std::string QuoteLibpqValue(const std::string& value);

}  // namespace seatwatch::db
