#include "declare/identifier.h"

#include <algorithm>
#include <array>

namespace seatwatch::declare {

namespace {

// SELECT word FROM pg_get_keywords() WHERE catcode <> 'U' ORDER BY word;
// (PostgreSQL 15): the reserved, column-name and type-or-function-name
// keywords, which an identifier may only be as "word".
constexpr std::array<std::string_view, 151> kQuotedKeywords = {
    "all", "analyse", "analyze", "and", "any", "array", "as", "asc", "asymmetric",
    "authorization", "between", "bigint", "binary", "bit", "boolean", "both", "case", "cast",
    "char", "character", "check", "coalesce", "collate", "collation", "column", "concurrently",
    "constraint", "create", "cross", "current_catalog", "current_date", "current_role",
    "current_schema", "current_time", "current_timestamp", "current_user", "dec", "decimal",
    "default", "deferrable", "desc", "distinct", "do", "else", "end", "except", "exists",
    "extract", "false", "fetch", "float", "for", "foreign", "freeze", "from", "full", "grant",
    "greatest", "group", "grouping", "having", "ilike", "in", "initially", "inner", "inout",
    "int", "integer", "intersect", "interval", "into", "is", "isnull", "join", "lateral",
    "leading", "least", "left", "like", "limit", "localtime", "localtimestamp", "national",
    "natural", "nchar", "none", "normalize", "not", "notnull", "null", "nullif", "numeric",
    "offset", "on", "only", "or", "order", "out", "outer", "overlaps", "overlay", "placing",
    "position", "precision", "primary", "real", "references", "returning", "right", "row",
    "select", "session_user", "setof", "similar", "smallint", "some", "substring", "symmetric",
    "table", "tablesample", "then", "time", "timestamp", "to", "trailing", "treat", "trim",
    "true", "union", "unique", "user", "using", "values", "varchar", "variadic", "verbose",
    "when", "where", "window", "with", "xmlattributes", "xmlconcat", "xmlelement",
    "xmlexists", "xmlforest", "xmlnamespaces", "xmlparse", "xmlpi", "xmlroot", "xmlserialize",
    "xmltable"};

bool IsPlain(std::string_view name) {
  if (name.empty()) return false;
  char first = name[0];
  if (!((first >= 'a' && first <= 'z') || first == '_')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
  });
}

}  // namespace

bool IsQuotedKeyword(std::string_view word) {
  return std::binary_search(kQuotedKeywords.begin(), kQuotedKeywords.end(), word);
}

std::string QuoteIdentifier(std::string_view name) {
  if (IsPlain(name) && !IsQuotedKeyword(name)) return std::string(name);
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string QuoteTable(const TableName& table) {
  if (table.schema.empty()) return QuoteIdentifier(table.name);
  return QuoteIdentifier(table.schema) + "." + QuoteIdentifier(table.name);
}

std::string TableText(const TableName& table) {
  return table.schema.empty() ? table.name : table.schema + "." + table.name;
}

TableName TableFromText(const std::string& text) {
  TableName table;
  size_t dot = text.find('.');
  if (dot == std::string::npos) {
    table.name = text;
  } else {
    table.schema = text.substr(0, dot);
    table.name = text.substr(dot + 1);
  }
  return table;
}

}  // namespace seatwatch::declare
