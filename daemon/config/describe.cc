#include "config/describe.h"

#include "db/dsn_mask.h"
#include "util/duration.h"

namespace seatwatch::config {

std::vector<std::string> DescribeIncremental(const Config& config) {
  std::vector<std::string> lines;
  bool any = false;
  for (const auto& query : config.queries) any = any || !query.scoped_sql_path.empty();
  const ChangesConfig& changes = config.changes;
  if (changes.enabled) {
    lines.push_back("changes: enabled, dsn " + db::MaskDsn(config.ChangesDsn()) +
                    (changes.dsn.empty() ? " (that of [database])" : "") + ", publication " +
                    changes.publication + ", interval " + util::FormatDuration(changes.interval) +
                    ", full pass every " + util::FormatDuration(changes.full_pass_interval));
  } else if (any) {
    lines.push_back("changes: enabled = false: incremental entries run full passes at their interval");
  }
  for (const auto& query : config.queries) {
    if (query.scoped_sql_path.empty()) continue;
    std::string tables;
    for (const auto& [table, column] : query.tables) {
      tables += (tables.empty() ? "" : ", ") + table + "." + column;
    }
    const char* section = query.kind == QueryConfig::Kind::kInvariant ? "invariant" : "metric";
    lines.push_back(std::string(section) + " " + query.name + ": incremental (key " + query.key +
                    "; tables " + tables + "; scoped_sql " + query.scoped_sql_path +
                    (query.expiry_column.empty() ? "" : "; expiry_column " + query.expiry_column) + ")");
  }
  return lines;
}

}  // namespace seatwatch::config
