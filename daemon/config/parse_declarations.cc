// [[invariant]] entries with `kind`: an invariant declared on the user's
// own tables. Parsed here into declare::Declaration; its kind's rules are
// applied at once, so every error names the file, line and key.
#include <algorithm>
#include <set>

#include "declare/identifier.h"
#include "config/names.h"
#include "config/sections.h"
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

std::string Listed(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  }
  return out;
}

// A name the catalog stores: PostgreSQL keeps 63 bytes, and a double quote
// means the name was written quoted ("Payment" is written Payment).
void RequireSqlName(const Location& where, const std::string& key, const std::string& name,
                    const std::string& what = "") {
  RequireLength(where, key, name, kMaxColumnLength, what);
  std::string prefix = what.empty() ? "" : what + " ";
  if (name.empty()) Fail(where, key, prefix + "must not be empty");
  if (HasControlCharacter(name)) Fail(where, key, prefix + "must not contain control characters");
  if (name.find('"') != std::string::npos) {
    Fail(where, key,
         prefix + "holds a double quote: write the name as the catalog stores it, without "
                  "quotes (seatwatch quotes it)");
  }
}

declare::TableName ParseTableName(const Location& where, const std::string& key,
                                  const std::string& text) {
  RequireLength(where, key, text, kMaxTableNameLength);
  declare::TableName table = declare::TableFromText(text);
  if (text.find('.') != std::string::npos) {
    RequireSqlName(where, key, table.schema, "the schema");
  }
  RequireSqlName(where, key, table.name, "the table name");
  return table;
}

std::vector<std::string> ParseColumns(TableReader& reader, const std::string& key,
                                      DeclaredEntry& entry, const std::string& field) {
  auto columns = reader.StringArray(key);
  if (!columns) return {};
  const Location& where = entry.FieldLocation(field);
  std::set<std::string> seen;
  for (const auto& column : *columns) {
    RequireSqlName(where, reader.Qualified(key), column, "a column");
    if (!seen.insert(column).second) {
      Fail(where, reader.Qualified(key), "\"" + column + "\" is listed twice");
    }
  }
  return *columns;
}

std::string ParseExpression(TableReader& reader, const std::string& key, DeclaredEntry& entry,
                            const std::string& field) {
  auto text = reader.LimitedString(key);
  if (!text) return "";
  std::string problem = declare::ExpressionProblem(*text);
  if (!problem.empty()) Fail(entry.FieldLocation(field), reader.Qualified(key), problem);
  return *text;
}

// Records where each key of `reader` that is written stands, as prefix.key.
void RecordKeys(const TableReader& reader, const std::string& prefix,
                const std::vector<std::string>& keys, DeclaredEntry& entry) {
  for (const auto& key : keys) {
    if (const toml::node* node = reader.Peek(key)) {
      entry.keys[prefix.empty() ? key : prefix + "." + key] = reader.Where(*node);
    }
  }
}

// rows, in, limit: a table of the keys `keys` (a subset of table, columns,
// where, sum, expires, column).
declare::RowSet ParseRowSet(TableReader& parent, const std::string& field,
                            const std::vector<std::string>& keys, DeclaredEntry& entry) {
  const toml::node* node = parent.Find(field);
  const toml::table* table = node->as_table();
  if (!table) {
    Fail(parent.Where(*node), parent.Qualified(field),
         "must be a table of " + Listed(keys) + " (written { table = \"...\", ... } on one line, "
         "or as [" + parent.Qualified(field) + "] below the entry)");
  }
  TableReader reader(*table, parent.file(), parent.Qualified(field));
  RecordKeys(reader, field, keys, entry);
  declare::RowSet set;
  if (auto name = reader.String("table")) {
    set.table = ParseTableName(entry.FieldLocation(field + ".table"), reader.Qualified("table"), *name);
  } else {
    Fail(parent.Where(*node), reader.Qualified("table"), "is required");
  }
  auto has = [&](const char* key) { return std::find(keys.begin(), keys.end(), key) != keys.end(); };
  if (has("columns")) set.columns = ParseColumns(reader, "columns", entry, field + ".columns");
  if (has("where")) set.where = ParseExpression(reader, "where", entry, field + ".where");
  if (has("sum")) set.sum = ParseExpression(reader, "sum", entry, field + ".sum");
  if (has("expires")) {
    if (auto column = reader.String("expires")) {
      RequireSqlName(entry.FieldLocation(field + ".expires"), reader.Qualified("expires"), *column);
      set.expires = *column;
    }
  }
  if (has("column")) {
    if (auto column = reader.String("column")) {
      RequireSqlName(entry.FieldLocation(field + ".column"), reader.Qualified("column"), *column);
      set.column = *column;
    }
  }
  reader.RejectUnknownKeys();
  return set;
}

// `key`: one column or a list; `labels`: their label names.
void ParseKey(TableReader& reader, DeclaredEntry& entry) {
  declare::Declaration& d = entry.declaration;
  const toml::node* node = reader.Peek("key");
  if (!node) Fail(entry.where, reader.Qualified("key"), "is required: the columns each violation is counted by");
  if (node->is_string()) {
    d.key = {*reader.String("key")};
  } else {
    d.key = *reader.StringArray("key");
  }
  const Location& where = entry.FieldLocation("key");
  if (d.key.empty()) Fail(where, reader.Qualified("key"), "must name at least one column");
  std::set<std::string> seen;
  for (const auto& column : d.key) {
    RequireSqlName(where, reader.Qualified("key"), column, "a column");
    if (!seen.insert(column).second) Fail(where, reader.Qualified("key"), "\"" + column + "\" is listed twice");
  }
  if (auto labels = reader.StringArray("labels")) {
    const Location& at = entry.FieldLocation("labels");
    if (labels->size() != d.key.size()) {
      Fail(at, reader.Qualified("labels"),
           "must name one label per key column (" + std::to_string(d.key.size()) + ")");
    }
    d.labels = *labels;
  } else {
    d.labels = d.key;
  }
  const std::string labels_key = reader.Qualified(reader.Peek("labels") ? "labels" : "key");
  const Location& labels_where = entry.FieldLocation(reader.Peek("labels") ? "labels" : "key");
  std::set<std::string> names;
  for (const auto& label : d.labels) {
    RequireLength(labels_where, labels_key, label, kMaxColumnLength, "a label");
    if (!IsLabelName(label) || label.rfind("seatwatch_", 0) == 0) {
      Fail(labels_where, labels_key,
           Printable(label) + " is not a valid Prometheus label name (nor may it start with "
           "seatwatch_): name the key's labels with `labels`");
    }
    if (label == "invariant") {
      Fail(labels_where, labels_key, "\"invariant\" is reserved: seatwatch sets it on every invariant series");
    }
    if (!names.insert(label).second) Fail(labels_where, labels_key, "\"" + label + "\" is listed twice");
  }
}

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

const Location& DeclaredEntry::FieldLocation(const std::string& field) const {
  auto it = keys.find(field);
  if (it != keys.end()) return it->second;
  size_t dot = field.find('.');
  if (dot != std::string::npos) {
    it = keys.find(field.substr(0, dot));
    if (it != keys.end()) return it->second;
  }
  return where;
}

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
  auto name = reader.String("name");
  if (!name) Fail(entry.where, reader.Qualified("name"), "is required");
  RequireIdentifier(entry.FieldLocation("name"), reader.Qualified("name"), *name);
  d.name = *name;
  entry.check = d.name;
  if (auto check = reader.String("check")) {
    RequireIdentifier(entry.FieldLocation("check"), reader.Qualified("check"), *check);
    entry.check = *check;
  }
  entry.help = reader.LimitedString("help").value_or("");
  if (HasControlCharacter(entry.help, "\n\t")) {
    Fail(entry.FieldLocation("help"), reader.Qualified("help"),
         "must not contain control characters other than line breaks and tabs");
  }
  ParseKey(reader, entry);
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
