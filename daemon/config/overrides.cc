#include "config/overrides.h"

#include <cstdlib>

#include "config/validate.h"

namespace seatwatch::config {

void ApplyEnvironment(Config& config, const EnvLookup& env) {
  if (auto dsn = env("SEATWATCH_DSN"); dsn && !dsn->empty()) {
    config.database.dsn = *dsn;
    // Checked like the file's DSN, so a bad one is a config error (exit 2)
    // at start, in --check-config and on SIGHUP alike.
    RequireUsableDsn(config.database, Location{"SEATWATCH_DSN", 0, 0});
  }
  // The slot session's role has REPLICATION (it can decode every row): its
  // password belongs in the environment even more than the monitor's.
  if (auto dsn = env("SEATWATCH_CHANGES_DSN"); dsn && !dsn->empty()) {
    config.changes.dsn = *dsn;
    RequireUsableChangesDsn(config, Location{"SEATWATCH_CHANGES_DSN", 0, 0});
  }
  // The checks lane's DSN (a standby's, say), kept out of the file likewise.
  if (auto dsn = env("SEATWATCH_CHECKS_DSN"); dsn && !dsn->empty()) {
    config.checks.dsn = *dsn;
    RequireUsableChecksDsn(config, Location{"SEATWATCH_CHECKS_DSN", 0, 0});
  }
}

EnvLookup ProcessEnvironment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (!value) return std::nullopt;
    return std::string(value);
  };
}

}  // namespace seatwatch::config
