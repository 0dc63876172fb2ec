#include "db/array_literal.h"

namespace seatwatch::db {

std::string TextArrayLiteral(const std::vector<std::string>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ",";
    out += "\"";
    for (char c : values[i]) {
      if (c == '"' || c == '\\') out += "\\";
      out += c;
    }
    out += "\"";
  }
  return out + "}";
}

}  // namespace seatwatch::db
