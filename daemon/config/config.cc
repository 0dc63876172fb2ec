#include "config/config.h"

namespace seatwatch::config {

std::string Location::Describe(const std::string& key) const {
  std::string out = file;
  if (line > 0) {
    out += ":" + std::to_string(line);
    if (column > 0) out += ":" + std::to_string(column);
  }
  out += ": " + key;
  return out;
}

Location HttpConfig::KeyLocation(const std::string& key) const {
  auto it = keys.find(key);
  return it == keys.end() ? Location{} : it->second;
}

const Location& QueryConfig::KeyLocation(const std::string& key) const {
  auto it = keys.find(key);
  return it == keys.end() ? where : it->second;
}

}  // namespace seatwatch::config
