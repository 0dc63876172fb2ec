#pragma once

#include <toml++/toml.h>

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "config/config.h"
#include "config/keys.h"

namespace seatwatch::config {

// Reads one TOML table strictly: every key must be consumed by a getter,
// leftovers are reported as unknown keys (a typo must not disable a check).
// Bounds, allowed values and lengths come from the key table (keys.h),
// looked up by the qualified name. Every error is a ConfigError phrased
// "file:line:col: key: problem". Not thread-safe; one per table read.
class TableReader {
 public:
  // `prefix` qualifies the keys in errors and in the key table ("database",
  // "http.basic_auth"); empty for the file's top level.
  TableReader(const toml::table& table, std::string file, std::string prefix);

  // The node of `key`, or nullptr; marks the key as read either way. Throws
  // std::logic_error for a key that is not in the key table.
  const toml::node* Find(const std::string& key);
  bool Has(const std::string& key) { return Find(key) != nullptr; }
  // The node of `key`, or nullptr, without marking it read.
  const toml::node* Peek(const std::string& key) const { return table_.get(key); }

  std::string Qualified(const std::string& key) const;
  const KeySpec& Spec(const std::string& key) const { return KeyNamed(Qualified(key)); }
  Location Where(const toml::node& node) const;
  Location TableWhere() const;
  const std::string& file() const { return file_; }

  std::optional<std::string> String(const std::string& key);
  // A string no longer than the key table's max_length for it.
  std::optional<std::string> LimitedString(const std::string& key);
  // One of the key table's allowed values; `plain` lists them unquoted.
  std::optional<std::string> Choice(const std::string& key, bool plain = false);
  // A file name (see RequirePath).
  std::optional<std::string> Path(const std::string& key);
  std::optional<bool> Bool(const std::string& key);
  // Within the key table's min and max.
  std::optional<long long> Integer(const std::string& key);
  // Within the key table's min and max.
  std::optional<Millis> Duration(const std::string& key);
  // Any duration ParseDuration takes; the caller checks the range.
  std::optional<Millis> AnyDuration(const std::string& key);
  std::optional<std::vector<std::string>> StringArray(const std::string& key);
  // Scalars of any type, rendered as the text PostgreSQL will receive.
  std::optional<std::vector<std::string>> ScalarArray(const std::string& key);
  const toml::table* Table(const std::string& key);

  void RejectUnknownKeys() const;

 private:
  // The array `key` with each item's text; `text_of` returns nullopt for an
  // item of the wrong type. `problem` says what the key must be,
  // `item_problem` what each item must be.
  std::optional<std::vector<std::string>> Array(
      const std::string& key, const std::string& problem, const std::string& item_problem,
      const std::function<std::optional<std::string>(const toml::node&)>& text_of);

  const toml::table& table_;
  std::string file_;
  std::string prefix_;
  std::set<std::string> used_;
};

Location LocationOf(const std::string& file, const toml::source_region& region);

[[noreturn]] void Fail(const Location& where, const std::string& key, const std::string& problem);

// Refuses `value` longer than `max`, before anything echoes it. `what` names
// one item of a list ("a label"); empty for the key's own value.
void RequireLength(const Location& where, const std::string& key, const std::string& value,
                   size_t max, const std::string& what = "");

// A check, metric or invariant name.
void RequireIdentifier(const Location& where, const std::string& key, const std::string& name,
                       const std::string& what = "");

// A file name: a NUL would silently cut it short, other control characters
// are certainly a mistake.
const std::string& RequirePath(const Location& where, const std::string& key,
                               const std::string& path);

// A result column that is not a label: any text PostgreSQL can name.
void RequireColumnName(const Location& where, const std::string& key, const std::string& name);

// `relative` against the folder of the config file at `config_path`.
std::string ResolvePath(const std::string& config_path, const std::string& relative);

}  // namespace seatwatch::config
