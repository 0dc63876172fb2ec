#include "support/test_config.h"

#include <regex>

#include "config/config_error.h"
#include "config/load.h"
#include "config/parse.h"
#include "support/test_env.h"

namespace seatwatch::testing {

std::string WriteShippedConfig(const std::string& dir, const std::string& poll_interval,
                               int listen_port, const std::string& extra) {
  std::string text = ReadFile(SourceDir() + "/config/seatwatch.toml");
  text = std::regex_replace(text, std::regex("\"\\.\\./queries/"), "\"" + SourceDir() + "/queries/");
  text = std::regex_replace(text, std::regex("interval = \"10s\""),
                            "interval = \"" + poll_interval + "\"");
  text = std::regex_replace(text, std::regex("listen = \"127\\.0\\.0\\.1:9646\""),
                            "listen = \"127.0.0.1:" + std::to_string(listen_port) + "\"");
  text += "\n" + extra;
  std::string path = dir + "/seatwatch.toml";
  WriteFile(path, text);
  return path;
}

config::Config LoadShippedConfig(const std::string& dsn, const std::string& poll_interval) {
  std::string dir = MakeTempDir("seatwatch-config");
  config::Config config = config::LoadConfig(WriteShippedConfig(dir, poll_interval, 9646));
  config.database.dsn = dsn;
  return config;
}

config::Config ConfigFromToml(const std::string& toml, const std::string& dsn) {
  config::Config config = config::ParseConfig(toml, SourceDir() + "/seatwatch-test.toml");
  config::LoadSqlFiles(config);
  config.database.dsn = dsn;
  return config;
}

std::string ConfigErrorOf(const std::string& toml, const std::string& path) {
  try {
    config::ParseConfig(toml, path);
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string SlowCleanupSql(const std::string& pause_seconds) {
  return "WITH pause AS MATERIALIZED (SELECT pg_sleep(" + pause_seconds + ")),\n"
         "picked AS (SELECT event_id, seat FROM seats, pause\n"
         "            WHERE status = 'held' AND hold_expires_at <= now()\n"
         "            ORDER BY hold_expires_at LIMIT $1 FOR UPDATE OF seats SKIP LOCKED)\n"
         "UPDATE seats s SET status = 'free', holder = NULL, hold_expires_at = NULL,\n"
         "                   version = s.version + 1\n"
         "  FROM picked p WHERE s.event_id = p.event_id AND s.seat = p.seat\n"
         "   AND s.status = 'held' AND s.hold_expires_at <= now()\n"
         "RETURNING s.event_id, s.seat\n";
}

}  // namespace seatwatch::testing
