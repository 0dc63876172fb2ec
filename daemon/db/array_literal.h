#pragma once

#include <string>
#include <vector>

namespace seatwatch::db {

// A PostgreSQL array literal of text elements, every element quoted, for a
// parameter the query casts (`$1::int[]`, `$1::text[]`): one parameter
// instead of SQL assembled from values.
std::string TextArrayLiteral(const std::vector<std::string>& values);

}  // namespace seatwatch::db
