#pragma once

#include <string>
#include <vector>

#include "declare/declaration.h"

namespace seatwatch::declare {

// The pieces every kind writes its SQL from. Names are quoted here, once;
// an operator's expression is pasted only through Pasted().

// alias.column, the column quoted.
std::string Col(const std::string& alias, const std::string& column);
// alias.c1, alias.c2, ...
std::string Cols(const std::string& alias, const std::vector<std::string>& columns);
// "table AS alias".
std::string From(const TableName& table, const std::string& alias);
// An operator's expression in its own parentheses, on lines of its own (a
// trailing "--" comment cannot eat the closing parenthesis).
std::string Pasted(const std::string& expression);
// "a.x = b.y AND a.z = b.w"
std::string Equal(const std::string& a, const std::vector<std::string>& a_columns,
                  const std::string& b, const std::vector<std::string>& b_columns);
// "a.x IS NOT NULL AND a.y IS NOT NULL"
std::string NotNull(const std::string& alias, const std::vector<std::string>& columns);
// alias.key AS "label", ... : the key as the result's labels.
std::string KeyAsLabels(const std::string& alias, const std::vector<std::string>& key,
                        const std::vector<std::string>& labels);
// The position of each of `wanted` in `columns`; throws DeclarationError on
// `field` for one that is not there.
std::vector<size_t> Positions(const std::vector<std::string>& wanted,
                              const std::vector<std::string>& columns, const std::string& field,
                              const std::string& what);
// The columns at `positions`.
std::vector<std::string> At(const std::vector<std::string>& columns,
                            const std::vector<size_t>& positions);
// `sql` two spaces in, each of its lines: a statement nested in another.
std::string Indented(const std::string& sql);
// `text` as an SQL string literal, its quotes doubled.
std::string Literal(const std::string& text);
// A number as SQL writes it: 4, 2.5.
std::string Number(double value);

// Which key values a statement reads: none (a full pass), $n per key
// column (the dirty keys of a recheck; the violating keys of a detail
// query), or the one key of a row named `row` whose columns are k1, k2, ...
// (a LATERAL join over the keys a balance gate found out of balance).
struct KeyFilter {
  std::vector<int> params;  // $n of each key column; empty: every key
  std::string row;          // the alias of a key row; empty: none
  bool all() const { return params.empty() && row.empty(); }
  // " AND alias.c = ANY ($n) ..." or " AND alias.c = row.k1 ..." for
  // `columns` (the key's columns in that table, in key order); "" for
  // every key.
  std::string On(const std::string& alias, const std::vector<std::string>& columns) const;
};

}  // namespace seatwatch::declare
