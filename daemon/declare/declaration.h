#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace seatwatch::declare {

// A table as the catalog stores its name; an empty schema resolves through
// the session's search_path.
struct TableName {
  std::string schema;
  std::string name;
};

// A set of rows of one table: `rows`, `in`, a limit table, a counter's
// counted table. Which fields a kind reads is up to the kind.
struct RowSet {
  TableName table;
  std::vector<std::string> columns;
  std::string where;    // SQL boolean on the table's columns; empty: every row
  std::string sum;      // SQL numeric expression; empty: rows are counted
  std::string expires;  // a timestamp column the where compares with now()
  std::string column;   // a limit table's limit, a counter's counter
};

// One [[invariant]] entry with `kind`: an invariant on the user's own
// tables, written as data, compiled to SQL by the kind's KindSql.
struct Declaration {
  std::string kind;                  // "exists", "unique", ... (kinds.cc)
  std::string name;                  // the invariant
  std::vector<std::string> key;      // columns of the main table
  std::vector<std::string> labels;   // the key's label names (default: the key)
  RowSet rows;                       // the rows judged (counter: the rows counted)
  std::optional<RowSet> in;          // exists: where a match is looked for
  std::optional<double> limit;       // at_most: a fixed limit
  std::optional<RowSet> limit_rows;  // at_most: a limit per group from a table
  std::optional<RowSet> counted;     // counter: table, columns, column
  std::string condition;             // check

  // The table whose columns the key names.
  const RowSet& Main() const { return counted ? *counted : rows; }
};

// A declaration the compiler cannot take; `field` is the key under the
// entry that is wrong ("rows.columns", "key", "where"), so that the config
// layer can name the file and line where it was written.
class DeclarationError : public std::runtime_error {
 public:
  DeclarationError(std::string field, const std::string& problem, std::string entry = "")
      : std::runtime_error(problem), field_(std::move(field)), entry_(std::move(entry)) {}
  const std::string& field() const { return field_; }
  // The invariant whose entry is wrong, when one check's entries disagree;
  // empty: the entry being compiled.
  const std::string& entry() const { return entry_; }

 private:
  std::string field_;
  std::string entry_;
};

}  // namespace seatwatch::declare
