#pragma once

#include <string>
#include <string_view>

#include "declare/declaration.h"

namespace seatwatch::declare {

// `name` as PostgreSQL's quote_ident() writes it: bare when it is a plain
// lower-case identifier that is not a reserved word, else in double quotes
// with inner quotes doubled. Callers refuse names with quotes earlier; the
// doubling is the last line, not the first.
std::string QuoteIdentifier(std::string_view name);

// schema.name, each part quoted; the name alone when the schema is empty.
std::string QuoteTable(const TableName& table);

// "schema.name" or "name" as written in a config and in messages.
std::string TableText(const TableName& table);
// The reverse of TableText: the schema before the first '.', if any.
TableName TableFromText(const std::string& text);

// The words quote_ident() quotes (pg_get_keywords() with catcode <> 'U',
// PostgreSQL 15).
bool IsQuotedKeyword(std::string_view word);

}  // namespace seatwatch::declare
