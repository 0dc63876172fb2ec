#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"

namespace seatwatch::config {

// Every key a config file may hold, with its type, default and bounds: the
// section parsers read their bounds from here, and the tests check the
// parser, Config{} and the configuration reference against it. Immutable
// after its first use; safe to read from any thread.

enum class KeyType {
  kString,
  kPath,         // a file name, resolved against the config file's folder
  kBool,
  kInteger,
  kDuration,     // a string with a unit: "250ms", "5s", "2m", "1h"
  kStringArray,
  kScalarArray,  // strings, numbers or booleans
  kTable,        // a table whose keys are the user's names (users, tables)
  kSection,      // a table of keys of this table: [database], [http.basic_auth]
  kEntryTables,  // written as [[name]], one table per entry
  kStringOrTable,
  kStringOrArray,    // one string or a list of them (a declared key)
  kNumberOrSection,  // a number, or a table of keys of this table (at_most's limit)
  kTableList,        // a list of tables of keys of this table (a declared metric's counts)
};

struct KeySpec {
  // Dotted as in error messages: "database.statement_timeout",
  // "invariant.max_rows", "log_level".
  std::string name;
  KeyType type = KeyType::kString;
  // The value when the key is not written, as TOML would spell it without
  // quotes ("5s", "500", "true", "seatwatch", "[]"); nullptr when there is
  // none (required, empty, or taken from another key).
  const char* default_text = nullptr;
  // Integers: the range. Durations: the range in milliseconds.
  long long min = 0;
  long long max = 0;
  // Strings: the most characters; 0 for no limit of its own.
  size_t max_length = 0;
  // Strings: the only values allowed; empty for any.
  std::vector<std::string> allowed;
  // The key's value in `config` rendered like default_text (entry keys read
  // config.queries[0]); nullptr when the key has no default.
  std::string (*value_of)(const Config& config) = nullptr;

  bool HasBounds() const { return type == KeyType::kInteger || type == KeyType::kDuration; }
  Millis MinDuration() const { return Millis(min); }
  Millis MaxDuration() const { return Millis(max); }
};

// The whole table, in the order of the configuration reference.
const std::vector<KeySpec>& AllKeys();

// The key named `name` (dotted); throws std::logic_error for a name that is
// not in the table: a parser asking for one is a bug, not a config error.
const KeySpec& KeyNamed(std::string_view name);

// `allowed` as an error message lists it: "\"a\", \"b\" or \"c\"".
std::string QuotedChoices(const std::vector<std::string>& allowed);

}  // namespace seatwatch::config
