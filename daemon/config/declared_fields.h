#pragma once

// What the parsers of declared entries ([[invariant]] and [[metric]] with
// `kind`) share: names as the catalog stores them, row sets, the key. Each
// records where its keys were written in the entry's DeclaredFields and
// throws ConfigError naming file, line and key.
#include <string>
#include <vector>

#include "config/config.h"
#include "config/table_reader.h"
#include "declare/declaration.h"

namespace seatwatch::config {

// "a, b and c".
std::string Listed(const std::vector<std::string>& names);

// A name the catalog stores: PostgreSQL keeps 63 bytes, and a double quote
// means the name was written quoted ("Payment" is written Payment).
void RequireSqlName(const Location& where, const std::string& key, const std::string& name,
                    const std::string& what = "");

declare::TableName ParseTableName(const Location& where, const std::string& key,
                                  const std::string& text);

// `key` of `reader`: column names, none twice; {} when not written.
std::vector<std::string> ParseColumns(TableReader& reader, const std::string& key,
                                      DeclaredFields& entry, const std::string& field);

// An operator's SQL expression (where, condition, sum); "" when not written.
std::string ParseExpression(TableReader& reader, const std::string& key, DeclaredFields& entry,
                            const std::string& field);

// Records where each key of `reader` that is written stands, as prefix.key.
void RecordKeys(const TableReader& reader, const std::string& prefix,
                const std::vector<std::string>& keys, DeclaredFields& entry);

// `field` of `parent` (rows, in, limit): a table of the keys `keys` (a
// subset of table, columns, where, sum, expires, column).
declare::RowSet ParseRowSet(TableReader& parent, const std::string& field,
                            const std::vector<std::string>& keys, DeclaredFields& entry);
// The same for a table read by `reader` (an item of a list of them);
// `field` names it in locations ("counts").
declare::RowSet ReadRowSet(TableReader& reader, const std::string& field,
                           const std::vector<std::string>& keys, DeclaredFields& entry);

// `name` (required), `check` (default: the name) and `help` of a declared
// entry: the name is returned, check and help set in `entry`.
std::string ParseNameCheckHelp(TableReader& reader, DeclaredFields& entry);

// `key`: one column or a list, into `key`; `labels` (their label names,
// default the columns) into `labels`.
void ParseKey(TableReader& reader, DeclaredFields& entry, std::vector<std::string>& key,
              std::vector<std::string>& labels);

}  // namespace seatwatch::config
