#include "checks/declared_proof.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include <pqxx/except>
#include <pqxx/result>

#include "db/savepoint.h"
#include "declare/identifier.h"
#include "declare/kind_sql.h"
#include "declare/sql_text.h"
#include "util/join.h"

namespace seatwatch::checks {

namespace {

using declare::QuoteIdentifier;
using declare::QuoteTable;
using declare::RowSet;
using declare::TableText;

// A column as the catalog has it.
struct Column {
  std::string type;      // format_type(): "integer", "timestamp with time zone"
  std::string category;  // pg_type.typcategory: N numeric, D date/time, ...
  bool not_null = false;
};

// A table as the catalog has it.
struct Table {
  long long oid = 0;
  std::string kind;  // pg_class.relkind
  double rows = 0;   // pg_class.reltuples; -1 when never analyzed
  std::vector<std::string> order;
  std::map<std::string, Column> columns;
};

// PostgreSQL's message without its "ERROR:" prefix, query echo or position.
std::string Problem(const std::exception& e) {
  std::string text = e.what();
  auto end = text.find('\n');
  if (end != std::string::npos) text.resize(end);
  for (const char* prefix : {"ERROR:  ", "ERROR: "}) {
    if (text.rfind(prefix, 0) == 0) {
      text.erase(0, std::string(prefix).size());
      break;
    }
  }
  return text;
}

// Runs `sql` under a savepoint; the problem when it fails.
std::optional<std::string> Compiles(pqxx::transaction_base& tx, const std::string& sql) {
  try {
    db::Savepoint savepoint(tx, "seatwatch_declared_proof");
    // exec_params, not exec: libpqxx 6 aborts the whole transaction when a
    // statement sent by exec() fails, savepoint or not.
    tx.exec_params(sql);
    savepoint.Release();
  } catch (const pqxx::broken_connection&) {
    throw;
  } catch (const std::exception& e) {
    return Problem(e);
  }
  return std::nullopt;
}

std::optional<Table> ReadTable(pqxx::transaction_base& tx, const declare::TableName& name) {
  pqxx::result found = tx.exec_params(
      "SELECT c.oid::int8, c.relkind::text, c.reltuples::float8 FROM pg_class c "
      "WHERE c.oid = to_regclass($1)",
      QuoteTable(name));
  if (found.empty()) return std::nullopt;
  Table table;
  table.oid = found[0][0].as<long long>();
  table.kind = found[0][1].as<std::string>();
  table.rows = found[0][2].as<double>();
  pqxx::result columns = tx.exec_params(
      "SELECT a.attname::text, format_type(a.atttypid, a.atttypmod), t.typcategory::text, "
      "a.attnotnull FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
      "WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
      table.oid);
  for (const auto& row : columns) {
    std::string name = row[0].as<std::string>();
    table.order.push_back(name);
    table.columns[name] = {row[1].as<std::string>(), row[2].as<std::string>(), row[3].as<bool>()};
  }
  return table;
}

// The columns of `table` for a message, at most a screenful.
std::string ColumnList(const Table& table) {
  constexpr size_t kShown = 20;
  std::vector<std::string> shown(table.order.begin(),
                                 table.order.begin() + std::min(kShown, table.order.size()));
  std::string out = util::Join(shown, ", ");
  if (table.order.size() > kShown) {
    out += ", ... (" + std::to_string(table.order.size()) + " in all)";
  }
  return out;
}

// The field a row set's key is written under: "rows.where", or "where" for
// a counter's own table (its fields are the entry's).
std::string Field(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

// `field` as the config key it stands for: "counts.2.where" (the third
// count's) is written metric.counts.where.
std::string KeyOf(const std::string& section, const std::string& field) {
  std::string key = section;
  size_t from = 0;
  while (true) {
    size_t dot = field.find('.', from);
    std::string part = field.substr(from, dot == std::string::npos ? std::string::npos : dot - from);
    if (part.find_first_not_of("0123456789") != std::string::npos) key += "." + part;
    if (dot == std::string::npos) return key;
    from = dot + 1;
  }
}

// Proves the row sets of one declared entry; each finding names its key.
class FieldsProof {
 public:
  FieldsProof(pqxx::transaction_base& tx, const config::DeclaredFields& fields,
              std::string section, std::vector<std::string>& errors)
      : tx_(tx), fields_(fields), section_(std::move(section)), errors_(errors) {}

 protected:
  void Fail(const std::string& field, const std::string& problem) {
    errors_.push_back(fields_.FieldLocation(field).Describe(KeyOf(section_, field)) + ": " +
                      problem);
    ok_ = false;
  }

  bool HasColumn(const Table& table, const declare::TableName& name, const std::string& field,
                 const std::string& column) {
    if (table.columns.count(column)) return true;
    Fail(field, "column \"" + column + "\" is not a column of " + TableText(name) +
                    " (names are taken as the catalog stores them; its columns: " +
                    ColumnList(table) + ")");
    return false;
  }

  void Expression(const std::string& field, const std::string& sql) {
    if (auto problem = Compiles(tx_, sql)) Fail(field, *problem);
  }

  // A row set's table, columns and expressions; its table when it exists.
  std::optional<Table> Set(const std::string& prefix, const RowSet& set) {
    std::optional<Table> table = ReadTable(tx_, set.table);
    if (!table) {
      Fail(Field(prefix, "table"),
           "table " + TableText(set.table) +
               " does not exist (or is not visible on the search_path, or not readable): names "
               "are taken as the catalog stores them, case and all (" +
               QuoteTable(set.table) + " in SQL)");
      return std::nullopt;
    }
    bool columns_ok = true;
    for (const auto& column : set.columns) {
      columns_ok = HasColumn(*table, set.table, Field(prefix, "columns"), column) && columns_ok;
    }
    if (!set.column.empty() && HasColumn(*table, set.table, Field(prefix, "column"), set.column)) {
      const Column& column = table->columns.at(set.column);
      if (column.category != "N") {
        Fail(Field(prefix, "column"), "column \"" + set.column + "\" of " +
                                          TableText(set.table) + " is " + column.type +
                                          "; it must be a number");
      }
    }
    if (!set.expires.empty() &&
        HasColumn(*table, set.table, Field(prefix, "expires"), set.expires)) {
      const Column& column = table->columns.at(set.expires);
      if (column.category != "D") {
        Fail(Field(prefix, "expires"), "column \"" + set.expires + "\" of " +
                                           TableText(set.table) + " is " + column.type +
                                           "; expires names a timestamp column");
      }
    }
    const std::string from = " FROM " + QuoteTable(set.table);
    if (!set.where.empty()) {
      Expression(Field(prefix, "where"),
                 "SELECT 1" + from + " WHERE " + declare::Pasted(set.where) + " LIMIT 0");
    }
    if (!set.sum.empty()) {
      // As the compiled SQL adds it up: to float8 in the end.
      Expression(Field(prefix, "sum"),
                 "SELECT sum(" + declare::Pasted(set.sum) + ")::float8" + from + " LIMIT 0");
    }
    if (!columns_ok) table->oid = 0;  // no pairing on missing columns
    return table;
  }

  pqxx::transaction_base& tx_;
  const config::DeclaredFields& fields_;
  std::string section_;
  std::vector<std::string>& errors_;
  bool ok_ = true;
};

// Proves one [[invariant]] with `kind`.
class EntryProof : public FieldsProof {
 public:
  EntryProof(pqxx::transaction_base& tx, const config::DeclaredEntry& entry,
             std::vector<std::string>& errors)
      : FieldsProof(tx, entry, "invariant", errors), entry_(entry) {}

  // Whether every part held.
  bool Run() {
    const auto& d = entry_.declaration;
    std::optional<Table> rows = Set("rows", d.rows);
    if (d.in) Paired("in", *d.in, rows);
    if (d.limit_rows) Paired("limit", *d.limit_rows, rows);
    if (d.counted) Paired("", *d.counted, rows);
    if (!d.condition.empty() && rows) {
      Expression("condition", "SELECT 1 FROM " + QuoteTable(d.rows.table) + " WHERE NOT " +
                                  declare::Pasted(d.condition) + " LIMIT 0");
    }
    return ok_;
  }

 private:
  // A row set whose columns pair with `rows`' columns, one by one.
  void Paired(const std::string& prefix, const RowSet& set, const std::optional<Table>& rows) {
    std::optional<Table> table = Set(prefix, set);
    const auto& main = entry_.declaration.rows;
    if (!table || !rows || table->oid == 0 || rows->oid == 0 ||
        set.columns.size() != main.columns.size()) {
      return;
    }
    if (auto problem = Compiles(tx_, "SELECT 1 FROM " + declare::From(main.table, "a") + ", " +
                                         declare::From(set.table, "b") + " WHERE " +
                                         declare::Equal("a", main.columns, "b", set.columns) +
                                         " LIMIT 0")) {
      Fail(Field(prefix, "columns"),
           "[" + util::Join(set.columns, ", ") + "] of " + TableText(set.table) +
               " do not compare with rows.columns [" + util::Join(main.columns, ", ") + "] of " +
               TableText(main.table) + ": " + *problem);
    }
  }

  const config::DeclaredEntry& entry_;
};

// Proves one [[metric]] with `kind`: each count's table, key columns and
// expressions.
class MetricProof : public FieldsProof {
 public:
  MetricProof(pqxx::transaction_base& tx, const config::DeclaredMetric& metric,
              std::vector<std::string>& errors)
      : FieldsProof(tx, metric, "metric", errors), metric_(metric) {}

  bool Run() {
    const auto& tallies = metric_.metric.tallies;
    for (size_t i = 0; i < tallies.size(); ++i) Set("counts." + std::to_string(i), tallies[i].rows);
    return ok_;
  }

 private:
  const config::DeclaredMetric& metric_;
};

// The columns of `oid`'s replica identity ("FULL" alone for FULL) and of
// each unique index usable as one (valid, immediate, not partial, no
// expression, every column NOT NULL).
struct Identity {
  std::string mode;  // relreplident: d, n, f, i
  std::vector<std::string> columns;
  std::vector<std::pair<std::string, std::vector<std::string>>> usable;
};

Identity ReadIdentity(pqxx::transaction_base& tx, long long oid) {
  Identity identity;
  identity.mode = tx.exec_params1("SELECT relreplident::text FROM pg_class WHERE oid = $1", oid)[0]
                      .as<std::string>();
  pqxx::result columns = tx.exec_params(
      "SELECT a.attname::text FROM pg_class c JOIN pg_index i ON i.indrelid = c.oid "
      "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = ANY (i.indkey) "
      "WHERE c.oid = $1 AND ((c.relreplident = 'd' AND i.indisprimary) OR "
      "(c.relreplident = 'i' AND i.indisreplident)) ORDER BY a.attnum",
      oid);
  for (const auto& row : columns) identity.columns.push_back(row[0].as<std::string>());
  pqxx::result indexes = tx.exec_params(
      "SELECT i.indexrelid::regclass::text, a.attname::text FROM pg_index i "
      "JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey) "
      "WHERE i.indrelid = $1 AND i.indisunique AND i.indisvalid AND i.indimmediate "
      "AND i.indpred IS NULL AND i.indexprs IS NULL AND NOT EXISTS ("
      "  SELECT 1 FROM pg_attribute n WHERE n.attrelid = i.indrelid "
      "  AND n.attnum = ANY (i.indkey) AND NOT n.attnotnull) "
      "ORDER BY i.indisreplident DESC, i.indisprimary DESC, 1, a.attnum",
      oid);
  for (const auto& row : indexes) {
    std::string index = row[0].as<std::string>();
    if (identity.usable.empty() || identity.usable.back().first != index) {
      identity.usable.push_back({index, {}});
    }
    identity.usable.back().second.push_back(row[1].as<std::string>());
  }
  return identity;
}

bool Covers(const std::vector<std::string>& columns, const std::vector<std::string>& wanted) {
  for (const auto& column : wanted) {
    if (std::find(columns.begin(), columns.end(), column) == columns.end()) return false;
  }
  return true;
}

// Once per table the entry's check reads: with [changes] on, its replica
// identity; and its key index wherever keys are read one by one (the
// rechecks of incremental mode; the keys a balance gate finds out of
// balance, in any mode).
class FeedAdvice {
 public:
  FeedAdvice(pqxx::transaction_base& tx, std::vector<std::string>& warnings)
      : tx_(tx), warnings_(warnings) {}

  void Entry(const config::DeclaredEntry& entry, bool changes, bool incremental) {
    const auto* kind = declare::KindNamed(entry.declaration.kind);
    if (kind == nullptr) return;
    bool gated = kind->BalanceOf(entry.declaration) || kind->DistinctOf(entry.declaration);
    Tables(kind->Tables(entry.declaration), changes, incremental || gated,
           entry.FieldLocation("key").Describe("invariant.key") + ": ");
  }

  // A metric's counts are read in its check's scans, not key by key: only
  // a recheck reads by key.
  void Metric(const config::DeclaredMetric& metric, bool changes, bool incremental) {
    std::vector<declare::KeyedTable> tables;
    for (const auto& tally : metric.metric.tallies) {
      tables.push_back({tally.rows.table, tally.rows.columns});
    }
    Tables(tables, changes, incremental, metric.FieldLocation("key").Describe("metric.key") + ": ");
  }

 private:
  void Tables(const std::vector<declare::KeyedTable>& tables, bool changes, bool by_key,
              const std::string& where) {
    for (const auto& keyed : tables) {
      std::string text = declare::TableText(keyed.table);
      bool identity = changes && identity_seen_.insert(text).second;
      bool index = by_key && index_seen_.insert(text).second;
      if (!identity && !index) continue;
      std::optional<Table> table = ReadTable(tx_, keyed.table);
      if (!table) continue;  // an error of the entry already
      if (identity) ReplicaIdentity(where, keyed, *table);
      if (index) KeyIndex(where, keyed, *table);
    }
  }

  void ReplicaIdentity(const std::string& where, const declare::KeyedTable& keyed,
                       const Table& table) {
    if (table.kind != "p") {
      Leaf(where, keyed, table.oid, QuoteTable(keyed.table), TableText(keyed.table));
      return;
    }
    // Published through the root: the root's Relation message says which
    // columns an old row carries (FULL: all that the partition's identity
    // gives), each partition's identity what it carries.
    if (ReadIdentity(tx_, table.oid).mode != "f") {
      warnings_.push_back(where + "the replica identity of the partitioned table " +
                          TableText(keyed.table) +
                          " is not FULL: the changes of its partitions, published through it, "
                          "would carry no old key; run: ALTER TABLE " + QuoteTable(keyed.table) +
                          " REPLICA IDENTITY FULL; (a partitioned table stores no rows: no "
                          "WAL is added)");
    }
    pqxx::result leaves = tx_.exec_params(
        "SELECT relid::oid::int8, relid::regclass::text FROM pg_partition_tree($1::oid::regclass) "
        "WHERE isleaf ORDER BY 2",
        table.oid);
    for (const auto& leaf : leaves) {
      std::string name = leaf[1].as<std::string>();
      Leaf(where, keyed, leaf[0].as<long long>(), name, name);
    }
  }

  void Leaf(const std::string& where, const declare::KeyedTable& keyed, long long oid,
            const std::string& quoted, const std::string& text) {
    Identity identity = ReadIdentity(tx_, oid);
    if (identity.mode == "f" || Covers(identity.columns, keyed.key_columns)) return;
    std::string fix = "ALTER TABLE " + quoted + " REPLICA IDENTITY FULL;";
    for (const auto& [index, columns] : identity.usable) {
      if (Covers(columns, keyed.key_columns)) {
        fix = "ALTER TABLE " + quoted + " REPLICA IDENTITY USING INDEX " + index + ";";
        break;
      }
    }
    std::string now = identity.mode == "n"   ? "NOTHING"
                      : identity.mode == "i" ? "USING INDEX (" + util::Join(identity.columns, ", ") + ")"
                      : identity.columns.empty()
                          ? "DEFAULT, and it has no primary key"
                          : "DEFAULT, the primary key (" + util::Join(identity.columns, ", ") + ")";
    warnings_.push_back(where + "the replica identity of " + text + " (" + now +
                        ") does not carry " + util::Join(keyed.key_columns, ", ") +
                        ": a DELETE (or an UPDATE that changes it) names no key, and seatwatch "
                        "answers it with a full pass; run: " + fix);
  }

  void KeyIndex(const std::string& where, const declare::KeyedTable& keyed, const Table& table) {
    if (keyed.key_columns.size() != 1 || table.rows < kIndexAdviceRows) return;
    pqxx::result leading = tx_.exec_params(
        "SELECT 1 FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid "
        "AND a.attnum = i.indkey[0] WHERE i.indrelid = $1 AND i.indisvalid AND a.attname = $2",
        table.oid, keyed.key_columns[0]);
    if (!leading.empty()) return;
    warnings_.push_back(where + TableText(keyed.table) + " (about " +
                        std::to_string(static_cast<long long>(table.rows)) +
                        " rows) has no index that starts with " + keyed.key_columns[0] +
                        ": each key read by itself (a recheck of a few keys, a key out of "
                        "balance in a full pass) reads the whole table; create one: "
                        "CREATE INDEX CONCURRENTLY ON " + QuoteTable(keyed.table) + " (" +
                        QuoteIdentifier(keyed.key_columns[0]) + ");");
  }

  pqxx::transaction_base& tx_;
  std::vector<std::string>& warnings_;
  std::set<std::string> identity_seen_;
  std::set<std::string> index_seen_;
};

}  // namespace

DeclaredProof ProveDeclarations(pqxx::transaction_base& tx, const config::Config& config) {
  DeclaredProof proof;
  std::map<std::string, bool> incremental;  // check -> compiled with a scoped query
  for (const auto& query : config.queries) {
    if (query.compiled) incremental[query.pass_of] = !query.scoped_sql.empty();
  }
  FeedAdvice advice(tx, proof.warnings);
  for (const auto& entry : config.declared) {
    const std::string& name = entry.declaration.name;
    if (!EntryProof(tx, entry, proof.errors).Run()) {
      proof.failed_checks.insert(entry.check);
      continue;
    }
    proof.proved.push_back("invariant " + name + " (" + entry.declaration.kind +
                           "): tables, columns and expressions prove on the database");
    advice.Entry(entry, config.changes.enabled,
                 config.changes.enabled && incremental[entry.check]);
  }
  for (const auto& metric : config.declared_metrics) {
    const std::string& name = metric.metric.name;
    if (!MetricProof(tx, metric, proof.errors).Run()) {
      proof.failed_checks.insert(metric.check);
      continue;
    }
    proof.proved.push_back("metric " + name + " (" + metric.kind +
                           "): tables, columns and expressions prove on the database");
    advice.Metric(metric, config.changes.enabled,
                  config.changes.enabled && incremental[metric.check]);
  }
  return proof;
}

}  // namespace seatwatch::checks
