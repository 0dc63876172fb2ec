#include "checks/scoped_comparison.h"

#include <algorithm>
#include <map>
#include <set>

#include "util/utf8.h"

namespace seatwatch::checks {

namespace {

using Row = std::vector<db::Rows::Cell>;
// A key's rows on the compared columns -> how many times each came back.
using RowCounts = std::map<Row, int>;

// Cells longer than this are cut in messages: a row is shown to say which
// one, not to print a whole document.
constexpr std::size_t kMaxShownCell = 64;

// A cell as a message shows it: quoted, cut, control bytes as \xNN.
std::string Shown(const db::Rows::Cell& cell) {
  if (!cell) return "NULL";
  std::string_view text(*cell);
  std::size_t cut = util::Utf8Prefix(text, kMaxShownCell);
  std::string out = "'";
  for (char c : util::ValidUtf8(text.substr(0, cut))) {
    auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      util::AppendHexBytes(out, std::string_view(&c, 1));
    } else {
      out += c;
    }
  }
  if (cut < text.size()) out += "...";
  return out + "'";
}

std::string ShownRow(const std::vector<std::string>& columns, const Row& row) {
  std::string out = "(";
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (i > 0) out += ", ";
    out += columns[i] + " = " + Shown(row[i]);
  }
  return out + ")";
}

std::string RowsWord(std::size_t count) {
  return std::to_string(count) + (count == 1 ? " row" : " rows");
}

int Total(const RowCounts& counts) {
  int total = 0;
  for (const auto& entry : counts) total += entry.second;
  return total;
}

// A row of `a` that `b` has fewer of, or nullptr.
const Row* FirstMissing(const RowCounts& a, const RowCounts& b) {
  for (const auto& [row, count] : a) {
    auto it = b.find(row);
    if (it == b.end() || it->second < count) return &row;
  }
  return nullptr;
}

// Keys in the order a reader expects: integers by value (9 before 10),
// before everything else in text order. A total order on any strings.
bool KeyBefore(const std::string& a, const std::string& b) {
  auto digits = [](const std::string& text) {
    return !text.empty() && std::all_of(text.begin(), text.end(),
                                        [](char c) { return c >= '0' && c <= '9'; });
  };
  bool da = digits(a);
  bool db = digits(b);
  if (da != db) return da;
  if (da && a.size() != b.size()) return a.size() < b.size();
  return a < b;
}

}  // namespace

std::vector<std::string> ComparedColumns(const config::QueryConfig& entry) {
  std::vector<std::string> columns;
  auto add = [&columns](const std::string& column) {
    if (column.empty()) return;
    if (std::find(columns.begin(), columns.end(), column) == columns.end()) {
      columns.push_back(column);
    }
  };
  for (const auto& label : entry.labels) add(label);
  add(entry.key);
  add(entry.value);
  add(entry.invariant_column);
  add(entry.expiry_column);
  return columns;
}

std::vector<std::string> SampleKeys(const db::Rows& full, const std::string& key_column,
                                    std::size_t count) {
  int index = full.ColumnIndex(key_column);
  if (index < 0 || count == 0) return {};
  std::set<std::string> distinct;
  for (const auto& row : full.values) {
    const auto& cell = row[static_cast<std::size_t>(index)];
    if (cell) distinct.insert(*cell);
  }
  std::vector<std::string> all(distinct.begin(), distinct.end());
  std::sort(all.begin(), all.end(), KeyBefore);
  if (all.size() <= count) return all;
  std::vector<std::string> sample;
  if (count == 1) return {all.front()};
  // The i-th of `count` positions spread from the first to the last value.
  for (std::size_t i = 0; i < count; ++i) {
    sample.push_back(all[i * (all.size() - 1) / (count - 1)]);
  }
  return sample;
}

std::optional<std::string> RowsForNoKeys(const config::QueryConfig& entry, const db::Rows& scoped) {
  if (scoped.values.empty()) return std::nullopt;
  std::string message = "with no keys ($1 = '{}') it returns " + RowsWord(scoped.values.size());
  int index = scoped.ColumnIndex(entry.key);
  if (index >= 0) {
    message += " (the first of " + entry.key + " = " +
               Shown(scoped.values.front()[static_cast<std::size_t>(index)]) + ")";
  }
  return message + ": it must return only rows of the keys in $1, e.g. WHERE " + entry.key +
         " = ANY ($1::int[])";
}

std::optional<std::string> ScopedRowsDiffer(const config::QueryConfig& entry, const db::Rows& full,
                                            const db::Rows& scoped,
                                            const std::vector<std::string>& keys) {
  const std::vector<std::string> columns = ComparedColumns(entry);
  std::vector<std::size_t> full_index;
  std::vector<std::size_t> scoped_index;
  for (const auto& column : columns) {
    int in_full = full.ColumnIndex(column);
    int in_scoped = scoped.ColumnIndex(column);
    if (in_full < 0) return "sql returns no column " + column + " to compare with";
    if (in_scoped < 0) return "it returns no column " + column + ", which sql returns";
    full_index.push_back(static_cast<std::size_t>(in_full));
    scoped_index.push_back(static_cast<std::size_t>(in_scoped));
  }
  const std::size_t key_at = static_cast<std::size_t>(
      std::find(columns.begin(), columns.end(), entry.key) - columns.begin());
  const std::set<std::string> asked(keys.begin(), keys.end());

  auto project = [](const Row& row, const std::vector<std::size_t>& indexes) {
    Row out;
    out.reserve(indexes.size());
    for (auto index : indexes) out.push_back(row[index]);
    return out;
  };
  std::map<std::string, RowCounts> want;
  std::map<std::string, RowCounts> got;
  for (const auto& row : full.values) {
    Row projected = project(row, full_index);
    const auto& key = projected[key_at];
    if (key && asked.count(*key)) ++want[*key][projected];
  }
  for (const auto& row : scoped.values) {
    Row projected = project(row, scoped_index);
    const auto& key = projected[key_at];
    if (!key || asked.count(*key) == 0) {
      std::string list;
      for (const auto& asked_key : keys) list += (list.empty() ? "" : ", ") + Shown(asked_key);
      return "it returned a row of " + entry.key + " = " + Shown(key) +
             ", a key it was not asked for (asked for " + list + ")";
    }
    ++got[*key][projected];
  }
  for (const auto& key : keys) {
    const RowCounts& a = want[key];
    const RowCounts& b = got[key];
    if (a == b) continue;
    std::string message = "for " + entry.key + " = " + Shown(key) + " it returns " +
                          RowsWord(static_cast<std::size_t>(Total(b))) + " where sql returns " +
                          std::to_string(Total(a)) + " on the same snapshot";
    if (const Row* missing = FirstMissing(a, b)) {
      message += "; sql's row " + ShownRow(columns, *missing) + " is missing";
    }
    if (const Row* extra = FirstMissing(b, a)) {
      message += "; its row " + ShownRow(columns, *extra) + " is not one of sql's";
    }
    return message;
  }
  return std::nullopt;
}

}  // namespace seatwatch::checks
