#include "config/table_reader.h"

#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "config/config_error.h"
#include "config/names.h"
#include "util/duration.h"

namespace seatwatch::config {

Location LocationOf(const std::string& file, const toml::source_region& region) {
  return Location{file, static_cast<int>(region.begin.line),
                  static_cast<int>(region.begin.column)};
}

void Fail(const Location& where, const std::string& key, const std::string& problem) {
  throw ConfigError(where.Describe(key) + ": " + problem);
}

void RequireLength(const Location& where, const std::string& key, const std::string& value,
                   size_t max, const std::string& what) {
  if (value.size() <= max) return;
  Fail(where, key,
       (what.empty() ? "is " : what + " is ") + std::to_string(value.size()) +
           " characters long; at most " + std::to_string(max));
}

void RequireIdentifier(const Location& where, const std::string& key, const std::string& name,
                       const std::string& what) {
  RequireLength(where, key, name, kMaxNameLength, what);
  if (!IsIdentifier(name)) Fail(where, key, Printable(name) + " must match [a-z_][a-z0-9_]*");
}

const std::string& RequirePath(const Location& where, const std::string& key,
                               const std::string& path) {
  if (HasControlCharacter(path)) Fail(where, key, "must not contain control characters");
  return path;
}

void RequireColumnName(const Location& where, const std::string& key, const std::string& name) {
  RequireLength(where, key, name, kMaxColumnLength);
  if (HasControlCharacter(name)) Fail(where, key, "must not contain control characters");
}

std::string ResolvePath(const std::string& config_path, const std::string& relative) {
  std::filesystem::path target(relative);
  if (target.is_absolute()) return target.lexically_normal().string();
  std::filesystem::path base = std::filesystem::path(config_path).parent_path();
  return (base / target).lexically_normal().string();
}

TableReader::TableReader(const toml::table& table, std::string file, std::string prefix)
    : table_(table), file_(std::move(file)), prefix_(std::move(prefix)) {}

const toml::node* TableReader::Find(const std::string& key) {
  // A key the table does not list is a bug of the parser, found by the first
  // test that reads its section: the table stays the whole list.
  if (used_.insert(key).second) KeyNamed(Qualified(key));
  return table_.get(key);
}

std::string TableReader::Qualified(const std::string& key) const {
  return prefix_.empty() ? key : prefix_ + "." + key;
}

Location TableReader::Where(const toml::node& node) const {
  return LocationOf(file_, node.source());
}

Location TableReader::TableWhere() const { return LocationOf(file_, table_.source()); }

std::optional<std::string> TableReader::String(const std::string& key) {
  const toml::node* node = Find(key);
  if (!node) return std::nullopt;
  auto value = node->value<std::string>();
  if (!node->is_string() || !value) Fail(Where(*node), Qualified(key), "must be a string");
  return *value;
}

std::optional<std::string> TableReader::LimitedString(const std::string& key) {
  auto value = String(key);
  if (value) RequireLength(Where(*Find(key)), Qualified(key), *value, Spec(key).max_length);
  return value;
}

std::optional<std::string> TableReader::Choice(const std::string& key, bool plain) {
  const toml::node* node = Find(key);
  if (!node) return std::nullopt;
  const std::vector<std::string>& allowed = Spec(key).allowed;
  std::optional<std::string> value = node->value<std::string>();
  if (node->is_string()) {
    for (const std::string& choice : allowed) {
      if (*value == choice) return value;
    }
  }
  std::string listed;
  for (const std::string& choice : allowed) listed += (listed.empty() ? "" : ", ") + choice;
  Fail(Where(*node), Qualified(key),
       plain ? "must be one of " + listed : "must be " + QuotedChoices(allowed));
}

std::optional<std::string> TableReader::Path(const std::string& key) {
  auto value = String(key);
  if (value) RequirePath(Where(*Find(key)), Qualified(key), *value);
  return value;
}

std::optional<bool> TableReader::Bool(const std::string& key) {
  const toml::node* node = Find(key);
  if (!node) return std::nullopt;
  if (!node->is_boolean()) Fail(Where(*node), Qualified(key), "must be true or false");
  return *node->value<bool>();
}

std::optional<long long> TableReader::Integer(const std::string& key) {
  const toml::node* node = Find(key);
  if (!node) return std::nullopt;
  if (!node->is_integer()) Fail(Where(*node), Qualified(key), "must be an integer");
  const KeySpec& spec = Spec(key);
  long long value = *node->value<int64_t>();
  if (value < spec.min || value > spec.max) {
    Fail(Where(*node), Qualified(key),
         "must be between " + std::to_string(spec.min) + " and " + std::to_string(spec.max) +
             " (got " + std::to_string(value) + ")");
  }
  return value;
}

std::optional<Millis> TableReader::AnyDuration(const std::string& key) {
  const toml::node* node = Find(key);
  if (!node) return std::nullopt;
  if (!node->is_string()) {
    Fail(Where(*node), Qualified(key), "must be a duration string such as \"5s\" or \"250ms\"");
  }
  try {
    return util::ParseDuration(*node->value<std::string>());
  } catch (const std::invalid_argument& e) {
    Fail(Where(*node), Qualified(key), e.what());
  }
}

std::optional<Millis> TableReader::Duration(const std::string& key) {
  std::optional<Millis> value = AnyDuration(key);
  if (!value) return value;
  const KeySpec& spec = Spec(key);
  if (*value < spec.MinDuration() || *value > spec.MaxDuration()) {
    Fail(Where(*Find(key)), Qualified(key),
         "must be at least " + util::FormatDuration(spec.MinDuration()) + " and at most " +
             util::FormatDuration(spec.MaxDuration()) + " (got " + util::FormatDuration(*value) +
             ")");
  }
  return value;
}

std::optional<std::vector<std::string>> TableReader::Array(
    const std::string& key, const std::string& problem, const std::string& item_problem,
    const std::function<std::optional<std::string>(const toml::node&)>& text_of) {
  const toml::node* node = Find(key);
  if (!node) return std::nullopt;
  const toml::array* array = node->as_array();
  if (!array) Fail(Where(*node), Qualified(key), problem);
  std::vector<std::string> out;
  for (const toml::node& item : *array) {
    std::optional<std::string> text = text_of(item);
    if (!text) Fail(Where(item), Qualified(key), item_problem);
    out.push_back(std::move(*text));
  }
  return out;
}

std::optional<std::vector<std::string>> TableReader::StringArray(const std::string& key) {
  const std::string problem = "must be an array of strings";
  return Array(key, problem, problem, [](const toml::node& item) {
    return item.is_string() ? item.value<std::string>() : std::nullopt;
  });
}

std::optional<std::vector<std::string>> TableReader::ScalarArray(const std::string& key) {
  auto text_of = [](const toml::node& item) -> std::optional<std::string> {
    if (item.is_string()) return item.value<std::string>();
    if (item.is_integer()) return std::to_string(*item.value<int64_t>());
    if (item.is_boolean()) return *item.value<bool>() ? "true" : "false";
    if (!item.is_floating_point()) return std::nullopt;
    std::ostringstream text;
    text << *item.value<double>();
    return text.str();
  };
  return Array(key, "must be an array", "parameters must be strings, numbers or booleans",
               text_of);
}

const toml::table* TableReader::Table(const std::string& key) {
  const toml::node* node = Find(key);
  if (!node) return nullptr;
  const toml::table* table = node->as_table();
  if (!table) Fail(Where(*node), Qualified(key), "must be a table");
  return table;
}

void TableReader::RejectUnknownKeys() const {
  for (auto&& [key, node] : table_) {
    std::string name(key.str());
    if (used_.count(name) == 0) {
      // A pasted blob as a key must not become a 50 KB log line.
      std::string shown =
          name.size() > kMaxNameLength ? name.substr(0, kMaxNameLength) + "..." : name;
      if (HasControlCharacter(shown)) shown = Printable(shown);
      Fail(LocationOf(file_, key.source()), Qualified(shown), "unknown key");
    }
  }
}

}  // namespace seatwatch::config
