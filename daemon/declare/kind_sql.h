#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "declare/balance.h"
#include "declare/declaration.h"
#include "declare/sql_text.h"

namespace seatwatch::declare {

// A table a declaration reads, with the columns that carry its key there
// (in key order): what the change feed maps a changed row to a key by.
struct KeyedTable {
  TableName table;
  std::vector<std::string> key_columns;
};

// One kind of declared invariant: the fields it takes, their rules, and the
// SQL it compiles to. Stateless; one instance per kind for the program's
// life, safe from any thread. A new kind is one file holding its KindSql and
// one line in kinds.cc.
class KindSql {
 public:
  virtual ~KindSql() = default;
  // The entry's fields beside name, help, check, key, labels, interval
  // and kind: "rows", "in", "limit", "condition", ...
  virtual std::vector<std::string> Fields() const = 0;
  // What parsing cannot see alone (a field the kind needs, column counts
  // that must agree, the key among the columns). Throws DeclarationError.
  virtual void Validate(const Declaration& declaration) const = 0;
  // One row per key with violations: the key as the labels, then
  // seatwatch_violations. `filter` narrows every table read to its keys.
  virtual std::string Violations(const Declaration& declaration,
                                 const KeyFilter& filter) const = 0;
  // The offending rows (or groups) of the keys in `filter`, in a stable order.
  virtual std::string Detail(const Declaration& declaration, const KeyFilter& filter) const = 0;
  // Every table the SQL reads, with its key columns.
  virtual std::vector<KeyedTable> Tables(const Declaration& declaration) const = 0;
  // The two sides whose balance for a key proves it has no violation
  // (balance_gate.h); nullopt for a kind that is always read exactly.
  virtual std::optional<Balance> BalanceOf(const Declaration& /*declaration*/) const {
    return std::nullopt;
  }
  // The rows that must hold no two equal, for a kind whose violations are
  // duplicates (unique): balanced against rows that a unique index keeps
  // distinct, they hold none (balance_gate.h). nullopt for other kinds.
  virtual std::optional<BalanceSide> DistinctOf(const Declaration& /*declaration*/) const {
    return std::nullopt;
  }
};

// nullptr for a name that is no kind.
const KindSql* KindNamed(std::string_view name);
// Every kind's name, in the documentation's order.
std::vector<std::string> KindNames();

// The kinds (one file each); KindNamed lists them.
const KindSql& ExistsKind();
const KindSql& UniqueKind();
const KindSql& AtMostKind();
const KindSql& CounterKind();
const KindSql& CheckKind();

// Rules more than one kind shares (kind_rules.cc).
// `set` has a table and at least one column.
void RequireColumns(const RowSet& set, const std::string& field, bool columns_needed);
// `set` has none of `fields` ("where", "sum", "expires", "column") set.
void RefuseFields(const RowSet& set, const std::string& field,
                  const std::vector<std::string>& fields, const std::string& kind);
// The key within `columns`; returns its positions there.
std::vector<size_t> KeyWithin(const Declaration& declaration,
                              const std::vector<std::string>& columns, const std::string& field);
// " ORDER BY" the key, then `more`, of `alias`.
std::string OrderBy(const std::string& alias, const std::vector<std::string>& columns);

}  // namespace seatwatch::declare
