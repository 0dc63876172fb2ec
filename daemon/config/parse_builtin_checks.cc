// [locks], [holds] and [cleanup]: the checks seatwatch ships.
#include "config/names.h"
#include "config/sections.h"

namespace seatwatch::config {

void ParseLocks(TableReader& reader, LocksConfig& locks) {
  locks.where = reader.TableWhere();
  if (auto v = reader.Bool("enabled")) locks.enabled = *v;
  if (auto v = reader.Duration("interval")) locks.interval = *v;
  if (auto v = reader.Duration("statement_timeout")) locks.statement_timeout = *v;
  if (auto v = reader.Duration("log_threshold")) locks.log_threshold = *v;
  if (auto name = reader.Choice("show_query")) {
    using ShowQuery = LocksConfig::ShowQuery;
    locks.show_query = *name == "raw"    ? ShowQuery::kRaw
                       : *name == "none" ? ShowQuery::kNone
                                         : ShowQuery::kNormalized;
  }
  if (auto v = reader.Integer("query_max_length")) locks.query_max_length = static_cast<int>(*v);
  if (const toml::node* node = reader.Find("resolve_rows")) {
    std::vector<std::string> tables;
    if (auto listed = reader.StringArray("resolve_rows")) tables = std::move(*listed);
    for (const auto& table : tables) {
      RequireLength(reader.Where(*node), "locks.resolve_rows", table, kMaxTableNameLength,
                    "a table name");
      if (!IsTableName(table)) {
        Fail(reader.Where(*node), "locks.resolve_rows",
             Printable(table) + " must be a table name such as \"seats\" or \"public.seats\"");
      }
      locks.resolve_rows.push_back(table);
    }
  }
  reader.RejectUnknownKeys();
}

void ParseHolds(TableReader& reader, HoldsConfig& holds) {
  holds.where = reader.TableWhere();
  // Written, the table asks for the check: on unless it says otherwise.
  holds.enabled = reader.Bool("enabled").value_or(KeyNamed("holds.enabled").default_text ==
                                                  std::string("true"));
  if (auto v = reader.Path("sql")) holds.sql_path = ResolvePath(reader.file(), *v);
  holds.interval = reader.Duration("interval");
  if (holds.enabled && holds.sql_path.empty()) Fail(holds.where, "holds.sql", "is required");
  reader.RejectUnknownKeys();
}

void ParseCleanup(TableReader& reader, CleanupConfig& cleanup) {
  cleanup.where = reader.TableWhere();
  if (auto v = reader.Bool("enabled")) cleanup.enabled = *v;
  if (auto v = reader.Path("sql")) cleanup.sql_path = ResolvePath(reader.file(), *v);
  if (auto v = reader.Path("dry_run_sql")) {
    cleanup.dry_run_sql_path = ResolvePath(reader.file(), *v);
  }
  if (auto v = reader.Duration("interval")) cleanup.interval = *v;
  if (auto v = reader.Integer("batch_size")) cleanup.batch_size = static_cast<int>(*v);
  if (auto v = reader.Integer("max_batches")) cleanup.max_batches = static_cast<int>(*v);
  if (auto v = reader.Duration("batch_pause")) cleanup.batch_pause = *v;
  if (auto v = reader.Duration("lock_timeout")) cleanup.lock_timeout = *v;
  if (auto v = reader.Duration("statement_timeout")) cleanup.statement_timeout = *v;
  if (auto v = reader.Bool("dry_run")) cleanup.dry_run = *v;
  if (cleanup.enabled && cleanup.sql_path.empty()) {
    Fail(cleanup.where, "cleanup.sql", "is required when cleanup is enabled");
  }
  if (cleanup.enabled && cleanup.dry_run && cleanup.dry_run_sql_path.empty()) {
    Fail(cleanup.where, "cleanup.dry_run_sql", "is required when dry_run = true");
  }
  reader.RejectUnknownKeys();
}

}  // namespace seatwatch::config
