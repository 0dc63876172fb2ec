#pragma once

#include <functional>
#include <optional>
#include <string>

#include "config/config.h"

namespace seatwatch::config {

using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

// SEATWATCH_DSN replaces [database] dsn, so a password never has to be in
// the file. Throws ConfigError ("SEATWATCH_DSN: database.dsn: ...") when
// the daemon could not use it. SEATWATCH_CHANGES_DSN replaces [changes] dsn
// the same way ("SEATWATCH_CHANGES_DSN: changes.dsn: ..."), and
// SEATWATCH_CHECKS_DSN [checks] dsn ("SEATWATCH_CHECKS_DSN: checks.dsn: ...").
void ApplyEnvironment(Config& config, const EnvLookup& env);

EnvLookup ProcessEnvironment();

}  // namespace seatwatch::config
