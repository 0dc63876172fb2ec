#include "config/declared_fields.h"

#include <algorithm>
#include <set>

#include "config/names.h"
#include "declare/identifier.h"
#include "declare/sql_expression.h"

namespace seatwatch::config {

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
                    const std::string& what) {
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
                                      DeclaredFields& entry, const std::string& field) {
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

std::string ParseExpression(TableReader& reader, const std::string& key, DeclaredFields& entry,
                            const std::string& field) {
  auto text = reader.LimitedString(key);
  if (!text) return "";
  std::string problem = declare::ExpressionProblem(*text);
  if (!problem.empty()) Fail(entry.FieldLocation(field), reader.Qualified(key), problem);
  return *text;
}

// Records where each key of `reader` that is written stands, as prefix.key.
void RecordKeys(const TableReader& reader, const std::string& prefix,
                const std::vector<std::string>& keys, DeclaredFields& entry) {
  for (const auto& key : keys) {
    if (const toml::node* node = reader.Peek(key)) {
      entry.keys[prefix.empty() ? key : prefix + "." + key] = reader.Where(*node);
    }
  }
}

// rows, in, limit: a table of the keys `keys` (a subset of table, columns,
// where, sum, expires, column).
declare::RowSet ParseRowSet(TableReader& parent, const std::string& field,
                            const std::vector<std::string>& keys, DeclaredFields& entry) {
  const toml::node* node = parent.Find(field);
  const toml::table* table = node->as_table();
  if (!table) {
    Fail(parent.Where(*node), parent.Qualified(field),
         "must be a table of " + Listed(keys) + " (written { table = \"...\", ... } on one line, "
         "or as [" + parent.Qualified(field) + "] below the entry)");
  }
  TableReader reader(*table, parent.file(), parent.Qualified(field));
  return ReadRowSet(reader, field, keys, entry);
}

declare::RowSet ReadRowSet(TableReader& reader, const std::string& field,
                           const std::vector<std::string>& keys, DeclaredFields& entry) {
  RecordKeys(reader, field, keys, entry);
  declare::RowSet set;
  if (auto name = reader.String("table")) {
    set.table = ParseTableName(entry.FieldLocation(field + ".table"), reader.Qualified("table"), *name);
  } else {
    Fail(reader.TableWhere(), reader.Qualified("table"), "is required");
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

void ParseKey(TableReader& reader, DeclaredFields& entry, std::vector<std::string>& key,
              std::vector<std::string>& key_labels) {
  const toml::node* node = reader.Peek("key");
  if (!node) Fail(entry.where, reader.Qualified("key"), "is required: the columns each violation is counted by");
  if (node->is_string()) {
    key = {*reader.String("key")};
  } else {
    key = *reader.StringArray("key");
  }
  const Location& where = entry.FieldLocation("key");
  if (key.empty()) Fail(where, reader.Qualified("key"), "must name at least one column");
  std::set<std::string> seen;
  for (const auto& column : key) {
    RequireSqlName(where, reader.Qualified("key"), column, "a column");
    if (!seen.insert(column).second) Fail(where, reader.Qualified("key"), "\"" + column + "\" is listed twice");
  }
  if (auto labels = reader.StringArray("labels")) {
    const Location& at = entry.FieldLocation("labels");
    if (labels->size() != key.size()) {
      Fail(at, reader.Qualified("labels"),
           "must name one label per key column (" + std::to_string(key.size()) + ")");
    }
    key_labels = *labels;
  } else {
    key_labels = key;
  }
  const std::string labels_key = reader.Qualified(reader.Peek("labels") ? "labels" : "key");
  const Location& labels_where = entry.FieldLocation(reader.Peek("labels") ? "labels" : "key");
  std::set<std::string> names;
  for (const auto& label : key_labels) {
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

const Location& DeclaredFields::FieldLocation(const std::string& field) const {
  auto it = keys.find(field);
  if (it != keys.end()) return it->second;
  size_t dot = field.find('.');
  if (dot != std::string::npos) {
    it = keys.find(field.substr(0, dot));
    if (it != keys.end()) return it->second;
  }
  return where;
}

std::string ParseNameCheckHelp(TableReader& reader, DeclaredFields& entry) {
  auto name = reader.String("name");
  if (!name) Fail(entry.where, reader.Qualified("name"), "is required");
  RequireIdentifier(entry.FieldLocation("name"), reader.Qualified("name"), *name);
  entry.check = *name;
  if (auto check = reader.String("check")) {
    RequireIdentifier(entry.FieldLocation("check"), reader.Qualified("check"), *check);
    entry.check = *check;
  }
  entry.help = reader.LimitedString("help").value_or("");
  if (HasControlCharacter(entry.help, "\n\t")) {
    Fail(entry.FieldLocation("help"), reader.Qualified("help"),
         "must not contain control characters other than line breaks and tabs");
  }
  return *name;
}

}  // namespace seatwatch::config
