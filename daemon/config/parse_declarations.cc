// [[invariant]] entries with `kind`: an invariant declared on the user's
// own tables. Parsed here into declare::Declaration; its kind's rules are
// applied at once, so every error names the file, line and key.
#include <algorithm>
#include <set>

#include "config/declared_fields.h"
#include "config/names.h"
#include "config/sections.h"
#include "declare/identifier.h"
#include "declare/kind_sql.h"
#include "declare/sql_expression.h"

namespace seatwatch::config {

namespace {

// Keys of a hand-written entry: a declared one has its SQL written for it.
const std::vector<std::string> kHandWrittenKeys = {
    "sql",           "value",  "params",     "invariant_column", "invariants",
    "invariant_help", "tables", "scoped_sql", "expiry_column"};

// Keys whose meaning depends on the kind: each kind takes some of them.
const std::vector<std::string> kKindFields = {"rows",  "in",      "limit",    "table",
                                               "columns", "column", "condition"};

void ParseKindFields(TableReader& reader, const declare::KindSql& kind, DeclaredEntry& entry) {
  declare::Declaration& d = entry.declaration;
  std::vector<std::string> fields = kind.Fields();
  for (const auto& field : kKindFields) {
    if (!reader.Peek(field) || std::find(fields.begin(), fields.end(), field) != fields.end()) continue;
    Fail(entry.FieldLocation(field), reader.Qualified(field),
         "is not taken by kind " + d.kind + " (it takes " + Listed(fields) + ")");
  }
  for (const auto& field : fields) {
    if (!reader.Peek(field)) continue;
    if (field == "rows") {
      d.rows = ParseRowSet(reader, "rows", {"table", "columns", "where", "sum", "expires"}, entry);
    } else if (field == "in") {
      d.in = ParseRowSet(reader, "in", {"table", "columns", "where"}, entry);
    } else if (field == "limit") {
      const toml::node* node = reader.Peek("limit");
      if (node->is_table()) {
        d.limit_rows = ParseRowSet(reader, "limit", {"table", "columns", "column"}, entry);
      } else if (node->is_integer() || node->is_floating_point()) {
        reader.Find("limit");
        d.limit = node->is_integer() ? static_cast<double>(*node->value<int64_t>())
                                     : *node->value<double>();
      } else {
        Fail(entry.FieldLocation("limit"), reader.Qualified("limit"),
             "must be a number or a table { table, columns, column }");
      }
    } else if (field == "table") {
      if (!d.counted) d.counted.emplace();
      d.counted->table = ParseTableName(entry.FieldLocation("table"), reader.Qualified("table"), *reader.String("table"));
    } else if (field == "columns") {
      if (!d.counted) d.counted.emplace();
      d.counted->columns = ParseColumns(reader, "columns", entry, "columns");
    } else if (field == "column") {
      if (!d.counted) d.counted.emplace();
      d.counted->column = *reader.String("column");
      RequireSqlName(entry.FieldLocation("column"), reader.Qualified("column"), d.counted->column);
    } else if (field == "condition") {
      d.condition = ParseExpression(reader, "condition", entry, "condition");
    }
  }
}

}  // namespace

DeclaredEntry ParseDeclaredEntry(TableReader& reader) {
  DeclaredEntry entry;
  entry.where = reader.TableWhere();
  RecordKeys(reader, "",
             {"kind", "name", "check", "help", "key", "labels", "interval", "max_rows",
              "detail_sql", "runbook_url", "rows", "in", "limit", "table", "columns", "column",
              "condition"},
             entry);
  declare::Declaration& d = entry.declaration;
  d.kind = *reader.Choice("kind");
  const declare::KindSql* kind = declare::KindNamed(d.kind);
  for (const auto& key : kHandWrittenKeys) {
    if (const toml::node* node = reader.Peek(key)) {
      Fail(reader.Where(*node), reader.Qualified(key),
           "is not taken by an entry with kind: seatwatch writes its SQL (drop kind to write it "
           "yourself)");
    }
  }
  d.name = ParseNameCheckHelp(reader, entry);
  ParseKey(reader, entry, d.key, d.labels);
  entry.interval = reader.Duration("interval");
  if (auto v = reader.Integer("max_rows")) entry.max_rows = static_cast<int>(*v);
  if (auto path = reader.Path("detail_sql")) entry.detail_sql_path = ResolvePath(reader.file(), *path);
  entry.runbook_url = ReadRunbookUrl(reader, entry.FieldLocation("runbook_url"));
  ParseKindFields(reader, *kind, entry);
  reader.RejectUnknownKeys();
  try {
    kind->Validate(d);
  } catch (const declare::DeclarationError& e) {
    Fail(entry.FieldLocation(e.field()), reader.Qualified(e.field()), e.what());
  }
  return entry;
}

}  // namespace seatwatch::config
