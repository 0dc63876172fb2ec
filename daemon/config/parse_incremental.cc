// The incremental keys of an [[invariant]] or [[metric]] entry: key, tables,
// scoped_sql (all or none) and expiry_column.
#include <algorithm>

#include "config/names.h"
#include "config/sections.h"

namespace seatwatch::config {

namespace {

// tables = { seats = "event_id", "booking.tickets" = "event_id" }.
void ParseTables(TableReader& reader, QueryConfig& query) {
  const toml::node* node = reader.Find("tables");
  const std::string key = reader.Qualified("tables");
  const toml::table* table = node->as_table();
  if (!table) {
    Fail(reader.Where(*node), key,
         "must be a table of table = \"key column\", e.g. { seats = \"event_id\" }");
  }
  if (table->empty()) Fail(reader.Where(*node), key, "must name at least one table");
  for (auto&& [name_key, item] : *table) {
    std::string name(name_key.str());
    Location where = LocationOf(reader.file(), name_key.source());
    RequireLength(where, key, name, kMaxTableNameLength, "a table name");
    if (!IsTableName(name)) {
      Fail(where, key,
           Printable(name) + " must be a table name such as \"seats\" or \"public.seats\"");
    }
    const std::string item_key = key + "." + name;
    if (item.is_table()) {
      // TOML reads public.seats = "..." as a table "public" holding "seats".
      Fail(where, item_key,
           "is a table: quote a schema-qualified name, e.g. \"public.seats\" = \"event_id\"");
    }
    if (!item.is_string()) Fail(where, item_key, "must be a string: the table's key column");
    std::string column = *item.value<std::string>();
    RequireLength(where, item_key, column, kMaxColumnLength);
    if (!IsIdentifier(column)) {
      Fail(where, item_key, Printable(column) + " must match [a-z_][a-z0-9_]*");
    }
    query.tables[name] = column;
    query.keys["tables." + name] = where;
  }
  // "seats" matches seats in every schema: with "public.seats" beside it, a
  // change to public.seats would have two key columns.
  for (const auto& [name, column] : query.tables) {
    size_t dot = name.find('.');
    if (dot == std::string::npos || !query.tables.count(name.substr(dot + 1))) continue;
    Fail(query.KeyLocation("tables." + name), key + "." + name,
         "overlaps \"" + name.substr(dot + 1) +
             "\", which already matches that table in every schema");
  }
}

void ParseExpiryColumn(TableReader& reader, QueryConfig& query) {
  query.expiry_column = *reader.String("expiry_column");
  const Location& where = query.KeyLocation("expiry_column");
  const std::string key = reader.Qualified("expiry_column");
  RequireLength(where, key, query.expiry_column, kMaxColumnLength);
  if (!IsIdentifier(query.expiry_column)) {
    Fail(where, key, Printable(query.expiry_column) + " must match [a-z_][a-z0-9_]*");
  }
  bool is_label = std::find(query.labels.begin(), query.labels.end(), query.expiry_column) !=
                  query.labels.end();
  if (is_label || query.expiry_column == query.value ||
      query.expiry_column == query.invariant_column) {
    Fail(where, key, "must not also be a label, the value column or the invariant column");
  }
}

}  // namespace

void ParseIncremental(TableReader& reader, QueryConfig& query) {
  const std::vector<std::string> kTogether = {"key", "tables", "scoped_sql"};
  std::vector<std::string> present;
  std::vector<std::string> missing;
  for (const auto& key : kTogether) (reader.Has(key) ? present : missing).push_back(key);
  bool has_expiry = reader.Has("expiry_column");
  if (present.empty()) {
    if (has_expiry) {
      Fail(query.KeyLocation("expiry_column"), reader.Qualified("expiry_column"),
           "needs key, tables and scoped_sql: it is read only in incremental mode");
    }
    return;
  }
  if (!missing.empty()) {
    std::string given = present[0];
    if (present.size() == 2) given += " and " + present[1];
    Fail(query.where, reader.Qualified(missing[0]),
         "is required with " + given + ": incremental mode needs key, tables and scoped_sql");
  }

  query.key = *reader.String("key");
  const Location& key_where = query.KeyLocation("key");
  RequireLength(key_where, reader.Qualified("key"), query.key, kMaxColumnLength);
  if (std::find(query.labels.begin(), query.labels.end(), query.key) == query.labels.end()) {
    Fail(key_where, reader.Qualified("key"),
         Printable(query.key) +
             " is not one of this entry's labels: the key must be a label, so that each row "
             "belongs to one key");
  }

  ParseTables(reader, query);

  auto scoped = reader.Path("scoped_sql");
  if (scoped->empty()) {
    Fail(query.KeyLocation("scoped_sql"), reader.Qualified("scoped_sql"), "must not be empty");
  }
  query.scoped_sql_path = ResolvePath(reader.file(), *scoped);

  if (has_expiry) ParseExpiryColumn(reader, query);
}

}  // namespace seatwatch::config
