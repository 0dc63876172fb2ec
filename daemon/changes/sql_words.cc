#include "changes/sql_words.h"

#include <cctype>

#include "config/config.h"

namespace seatwatch::changes {

namespace {

// PostgreSQL's reserved key words (Appendix C, PostgreSQL 15: "reserved"
// and "reserved (can be function or type)"): unquoted, none of them can name
// a column.
bool Reserved(const std::string& word) {
  static const std::set<std::string> kReserved = {
      "all", "analyse", "analyze", "and", "any", "array", "as", "asc", "asymmetric", "both",
      "case", "cast", "check", "collate", "column", "constraint", "create", "current_catalog",
      "current_date", "current_role", "current_time", "current_timestamp", "current_user",
      "default", "deferrable", "desc", "distinct", "do", "else", "end", "except", "false",
      "fetch", "for", "foreign", "from", "grant", "group", "having", "in", "initially",
      "intersect", "into", "lateral", "leading", "limit", "localtime", "localtimestamp", "not",
      "null", "offset", "on", "only", "or", "order", "placing", "primary", "references",
      "returning", "select", "session_user", "some", "symmetric", "table", "then", "to",
      "trailing", "true", "union", "unique", "user", "using", "variadic", "when", "where",
      "window", "with", "authorization", "binary", "collation", "concurrently", "cross",
      "current_schema", "freeze", "full", "ilike", "inner", "is", "isnull", "join", "left",
      "like", "natural", "notnull", "outer", "overlaps", "right", "similar", "tablesample",
      "verbose"};
  return kReserved.count(word) > 0;
}

bool IdentifierStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}

bool IdentifierPart(char c) {
  return IdentifierStart(c) || std::isdigit(static_cast<unsigned char>(c)) || c == '$';
}

// The end of a quoted run that starts at `i` (the opening quote), a doubled
// quote standing for itself; the text's end when it is not closed.
std::size_t QuotedEnd(std::string_view sql, std::size_t i, char quote, std::string* content) {
  std::size_t j = i + 1;
  while (j < sql.size()) {
    if (sql[j] == quote) {
      if (j + 1 < sql.size() && sql[j + 1] == quote) {
        if (content) content->push_back(quote);
        j += 2;
        continue;
      }
      return j + 1;
    }
    if (content) content->push_back(sql[j]);
    ++j;
  }
  return j;
}

// The end of a dollar-quoted string ($$...$$ or $tag$...$tag$) starting at
// `i`, or `i` when the text there is not one.
std::size_t DollarQuotedEnd(std::string_view sql, std::size_t i) {
  std::size_t j = i + 1;
  while (j < sql.size() && IdentifierPart(sql[j]) && sql[j] != '$') ++j;
  if (j >= sql.size() || sql[j] != '$') return i;
  std::string_view tag = sql.substr(i, j - i + 1);
  std::size_t close = sql.find(tag, j + 1);
  return close == std::string_view::npos ? sql.size() : close + tag.size();
}

}  // namespace

std::set<std::string> SqlWords(std::string_view sql) {
  std::set<std::string> words;
  std::size_t i = 0;
  while (i < sql.size()) {
    char c = sql[i];
    if (c == '-' && i + 1 < sql.size() && sql[i + 1] == '-') {
      std::size_t end = sql.find('\n', i);
      i = end == std::string_view::npos ? sql.size() : end + 1;
    } else if (c == '/' && i + 1 < sql.size() && sql[i + 1] == '*') {
      std::size_t end = sql.find("*/", i + 2);
      i = end == std::string_view::npos ? sql.size() : end + 2;
    } else if (c == '\'') {
      i = QuotedEnd(sql, i, '\'', nullptr);
    } else if (c == '"') {
      std::string name;
      i = QuotedEnd(sql, i, '"', &name);
      if (!name.empty()) words.insert(name);
    } else if (c == '$') {
      std::size_t end = DollarQuotedEnd(sql, i);
      i = end > i ? end : i + 1;
      while (i < sql.size() && std::isdigit(static_cast<unsigned char>(sql[i]))) ++i;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      while (i < sql.size() && (IdentifierPart(sql[i]) || sql[i] == '.')) ++i;
    } else if (IdentifierStart(c)) {
      // E'...' and friends are strings with a prefix.
      std::size_t start = i;
      while (i < sql.size() && IdentifierPart(sql[i])) ++i;
      if (i < sql.size() && sql[i] == '\'' && i - start == 1 &&
          std::string_view("EeBbXxNn").find(sql[start]) != std::string_view::npos) {
        i = QuotedEnd(sql, i, '\'', nullptr);
        continue;
      }
      std::string word(sql.substr(start, i - start));
      for (char& ch : word) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (!Reserved(word)) words.insert(word);
    } else {
      ++i;
    }
  }
  return words;
}

namespace {

// The columns a declared row set names: its columns, expiry and limit or
// counter column, and the words of its where and sum.
void AddRowSet(const declare::RowSet& rows, std::set<std::string>& words) {
  words.insert(rows.columns.begin(), rows.columns.end());
  for (const auto* name : {&rows.expires, &rows.column}) {
    if (!name->empty()) words.insert(*name);
  }
  for (const auto* text : {&rows.where, &rows.sum}) {
    auto named = SqlWords(*text);
    words.insert(named.begin(), named.end());
  }
}

// A compiled check's SQL names its own aliases and catalog columns too: its
// declarations say which columns of the user's tables it reads.
std::set<std::string> DeclaredWords(const config::Config& config, const std::string& check) {
  std::set<std::string> words;
  for (const auto& entry : config.declared) {
    if (entry.check != check) continue;
    const declare::Declaration& d = entry.declaration;
    words.insert(d.key.begin(), d.key.end());
    for (const auto* rows : {&d.rows, d.in ? &*d.in : nullptr,
                             d.limit_rows ? &*d.limit_rows : nullptr,
                             d.counted ? &*d.counted : nullptr}) {
      if (rows) AddRowSet(*rows, words);
    }
    auto named = SqlWords(d.condition);
    words.insert(named.begin(), named.end());
  }
  for (const auto& metric : config.declared_metrics) {
    if (metric.check != check) continue;
    words.insert(metric.metric.key.begin(), metric.metric.key.end());
    for (const auto& tally : metric.metric.tallies) AddRowSet(tally.rows, words);
  }
  return words;
}

}  // namespace

std::map<std::string, std::set<std::string>> MonitoredWords(const config::Config& config) {
  std::map<std::string, std::set<std::string>> words;
  for (const auto& entry : config.queries) {
    if (!entry.incremental()) continue;
    std::set<std::string> named;
    if (entry.compiled) {
      named = DeclaredWords(config, entry.pass_of.empty() ? entry.name : entry.pass_of);
    } else {
      for (const auto* sql : {&entry.sql, &entry.scoped_sql}) {
        auto more = SqlWords(*sql);
        named.insert(more.begin(), more.end());
      }
    }
    for (const auto& [table, column] : entry.tables) {
      words[table].insert(named.begin(), named.end());
    }
  }
  return words;
}

}  // namespace seatwatch::changes
