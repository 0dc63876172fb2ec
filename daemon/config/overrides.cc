#include "config/overrides.h"

#include <cstdlib>

namespace seatwatch::config {

void ApplyEnvironment(Config& config, const EnvLookup& env) {
  if (auto dsn = env("SEATWATCH_DSN"); dsn && !dsn->empty()) config.database.dsn = *dsn;
}

EnvLookup ProcessEnvironment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (!value) return std::nullopt;
    return std::string(value);
  };
}

}  // namespace seatwatch::config
