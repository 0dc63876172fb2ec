#include "poll/lane.h"

namespace seatwatch::poll {

std::string LaneName(Lane lane) { return lane == Lane::kLocks ? "locks" : "checks"; }

Lane LaneOf(const checks::Check& check) {
  return check.own_session() ? Lane::kLocks : Lane::kChecks;
}

std::vector<std::unique_ptr<checks::Check>> TakeLane(
    std::vector<std::unique_ptr<checks::Check>>& checks, Lane lane) {
  std::vector<std::unique_ptr<checks::Check>> taken;
  std::vector<std::unique_ptr<checks::Check>> rest;
  for (auto& check : checks) {
    (LaneOf(*check) == lane ? taken : rest).push_back(std::move(check));
  }
  checks = std::move(rest);
  return taken;
}

db::SessionSettings LaneSessionSettings(const config::Config& config, Lane lane) {
  const config::DatabaseConfig& db = config.database;
  db::SessionSettings settings;
  settings.application_name = db.application_name;
  settings.connect_timeout = db.connect_timeout;
  settings.statement_timeout = db.statement_timeout;
  settings.lock_timeout = db.lock_timeout;
  settings.read_only = true;
  if (lane == Lane::kLocks) {
    settings.application_name += "-locks";
    settings.statement_timeout = config.locks.statement_timeout;
  }
  return settings;
}

const std::string& LaneDsn(const config::Config& config, Lane lane) {
  return lane == Lane::kChecks ? config.ChecksDsn() : config.database.dsn;
}

}  // namespace seatwatch::poll
