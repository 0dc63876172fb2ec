#include "config/parse.h"

#include <toml++/toml.h>

#include "config/config_error.h"
#include "config/sections.h"
#include "config/table_reader.h"
#include "config/validate.h"

namespace seatwatch::config {

namespace {

// Runs `parse` on the table `name` of the file's top level, if written.
template <typename Parse>
void ParseSection(TableReader& top, const std::string& name, Parse parse) {
  if (const toml::table* table = top.Table(name)) {
    TableReader reader(*table, top.file(), name);
    parse(reader);
  }
}

}  // namespace

Config ParseConfig(std::string_view toml_text, const std::string& path) {
  toml::table root;
  try {
    root = toml::parse(toml_text, path);
  } catch (const toml::parse_error& e) {
    Location where = LocationOf(path, e.source());
    std::string description(e.description());
    // TOML 1.0 inline tables are one line; a declaration's rows = { ... }
    // grows long enough to be broken, and toml++ says only what it saw.
    if (description.find("inline table") != std::string::npos &&
        description.find("'\\n'") != std::string::npos) {
      description += " (an inline table { ... } must fit on one line: write a long one as a "
                     "sub-table, e.g. [invariant.rows] below its entry)";
    }
    throw ConfigError(where.file + ":" + std::to_string(where.line) + ":" +
                      std::to_string(where.column) + ": " + description);
  }
  Config config;
  config.path = path;
  TableReader top(root, path, "");
  // A string first ("must be a string"), then one of the levels.
  if (top.String("log_level")) config.log_level = *top.Choice("log_level", /*plain=*/true);
  if (auto v = top.Bool("allow_no_checks")) config.allow_no_checks = *v;
  ParseSection(top, "database", [&](TableReader& r) { ParseDatabase(r, config.database); });
  ParseSection(top, "http", [&](TableReader& r) { ParseHttp(r, config.http); });
  ParseSection(top, "poll", [&](TableReader& r) { ParsePoll(r, config.poll); });
  ParseEntries(top.Find("invariant"), "invariant", QueryConfig::Kind::kInvariant, path, config);
  ParseEntries(top.Find("metric"), "metric", QueryConfig::Kind::kMetric, path, config);
  ParseSection(top, "locks", [&](TableReader& r) { ParseLocks(r, config.locks); });
  ParseSection(top, "holds", [&](TableReader& r) { ParseHolds(r, config.holds); });
  ParseSection(top, "cleanup", [&](TableReader& r) { ParseCleanup(r, config.cleanup); });
  ParseSection(top, "changes", [&](TableReader& r) { ParseChanges(r, config); });
  ParseSection(top, "checks", [&](TableReader& r) { ParseChecks(r, config); });
  top.RejectUnknownKeys();
  CompileDeclarations(config);
  CheckUniqueNames(config);
  RequireChangesConsumer(config);
  return config;
}

}  // namespace seatwatch::config
