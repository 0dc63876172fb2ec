#include "config/validate.h"

#include <set>
#include <stdexcept>
#include <string>

#include "config/config_error.h"
#include "config/names.h"
#include "db/conninfo.h"
#include "db/libpq_options.h"

namespace seatwatch::config {

namespace {

// Far more than any list of hosts and options needs; keeps a pasted blob out
// of libpq and out of every log line that names the DSN.
constexpr size_t kMaxDsnLength = 8192;

// The values libpq 14 and later accept.
const std::set<std::string> kTargetSessionAttrs = {"any",     "read-write", "read-only",
                                                   "primary", "standby",    "prefer-standby"};

void RequireUsable(const std::string& dsn, const db::SessionSettings& settings, const std::string& key) {
  if (dsn.size() > kMaxDsnLength) {
    throw ConfigError(key + ": is " + std::to_string(dsn.size()) + " characters long; at most " +
                      std::to_string(kMaxDsnLength));
  }
  // libpq reads a C string: a NUL would silently cut the DSN short.
  if (dsn.find('\0') != std::string::npos) throw ConfigError(key + ": must not contain a NUL character");
  try {
    db::BuildConninfo(dsn, settings);
  } catch (const std::exception& e) {
    throw ConfigError(key + ": " + e.what());
  }
  // libpq checks the value only when it connects: a typo would keep the
  // lane down with "not reachable" instead of failing the config.
  std::string attrs = TargetSessionAttrs(dsn);
  if (!attrs.empty() && !kTargetSessionAttrs.count(attrs)) {
    throw ConfigError(key + ": target_session_attrs " + Printable(attrs.substr(0, 64)) +
                      " is not one of any, read-write, read-only, primary, standby, prefer-standby");
  }
}

}  // namespace

db::SessionSettings SettingsOf(const DatabaseConfig& database) {
  db::SessionSettings settings;
  settings.application_name = database.application_name;
  settings.connect_timeout = database.connect_timeout;
  settings.statement_timeout = database.statement_timeout;
  settings.lock_timeout = database.lock_timeout;
  return settings;
}

void RequireChecks(const Config& config) {
  if (config.allow_no_checks) return;
  bool locks_written = config.locks.where.line > 0 && config.locks.enabled;
  if (!config.queries.empty() || config.holds.enabled || config.cleanup.enabled || locks_written) return;
  throw ConfigError(config.path +
                    ": configures no checks (no [[invariant]], [[metric]], enabled [holds] or "
                    "[cleanup], or [locks] table); set allow_no_checks = true if that is intended");
}

void RequireUsableDsn(const DatabaseConfig& database, const Location& where) {
  RequireUsable(database.dsn, SettingsOf(database), where.Describe("database.dsn"));
}

void RequireUsableChangesDsn(const Config& config, const Location& where) {
  if (config.changes.dsn.empty()) return;
  db::SessionSettings settings = SettingsOf(config.database);
  settings.application_name += "-changes";
  settings.statement_timeout = config.changes.statement_timeout;
  RequireUsable(config.changes.dsn, settings, where.Describe("changes.dsn"));
}

void RequireUsableChecksDsn(const Config& config, const Location& where) {
  if (config.checks.dsn.empty()) return;
  // The checks lane's session: [database]'s settings as they are.
  RequireUsable(config.checks.dsn, SettingsOf(config.database), where.Describe("checks.dsn"));
}

std::string TargetSessionAttrs(const std::string& dsn) {
  db::LibpqOptions options = db::ParseLibpqOptions(dsn);
  if (!options) return "";
  for (const PQconninfoOption* option = options.get(); option->keyword; ++option) {
    if (std::string(option->keyword) == "target_session_attrs" && option->val) return option->val;
  }
  return "";
}

void RequireChangesConsumer(const Config& config) {
  if (!config.changes.enabled) return;
  for (const auto& query : config.queries) {
    if (query.AsksIncremental()) return;
  }
  throw ConfigError(config.changes.where.Describe("changes.enabled") +
                    ": is true, but no [[invariant]] or [[metric]] is incremental (none sets key, "
                    "tables and scoped_sql), so nothing would read the change feed");
}

}  // namespace seatwatch::config
