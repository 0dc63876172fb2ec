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

std::string QueryConfig::HelpOf(const std::string& invariant) const {
  auto it = invariant_help.find(invariant);
  return it == invariant_help.end() ? help : it->second;
}

std::string QueryConfig::RunbookOf(const std::string& invariant) const {
  if (runbook_url.empty() || runbook_url.find('#') != std::string::npos) return runbook_url;
  return runbook_url + "#" + invariant;
}

}  // namespace seatwatch::config
