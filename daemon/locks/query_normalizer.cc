#include "locks/query_normalizer.h"

#include <cstdint>
#include <vector>

namespace seatwatch::locks {

namespace {

// What a byte of the text is to a reading; the two readings' marks are OR'd.
enum Mark : std::uint8_t { kCode = 0, kComment = 1, kLiteral = 2 };

// Beyond any real statement: keeps the placeholder counter far from overflow.
constexpr std::uint64_t kMaxParam = 1000000000;

// PostgreSQL's scanner (scan.l) classes; bytes >= 0x80 count as letters.
bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
bool IsNewline(char c) { return c == '\n' || c == '\r'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsIdentStart(char c) {
  auto u = static_cast<unsigned char>(c);
  return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || u == '_' || u >= 0x80;
}
bool IsTagChar(char c) { return IsIdentStart(c) || IsDigit(c); }  // dollar-quote tags
bool IsIdentCont(char c) { return IsTagChar(c) || c == '$'; }
bool IsNumberChar(char c) { return IsTagChar(c) || c == '.'; }

// One reading of the text. `plain_backslash`: backslash escapes the next byte
// in '...' (standard_conforming_strings = off). Marks literals and comments;
// everything it leaves unmarked is code to this reading.
class Reading {
 public:
  Reading(std::string_view sql, bool plain_backslash, std::vector<std::uint8_t>& marks)
      : sql_(sql), plain_backslash_(plain_backslash), marks_(marks) {}

  void Run() {
    size_t i = 0;
    const size_t n = sql_.size();
    while (i < n) {
      char c = sql_[i];
      if (c == '\'') {
        i = MarkFrom(i, String(i, plain_backslash_), kLiteral);
      } else if (c == '"') {
        i = QuotedIdentifier(i);
      } else if (c == '-' && At(i + 1) == '-') {
        size_t end = i + 2;
        while (end < n && !IsNewline(sql_[end])) ++end;
        i = MarkFrom(i, end, kComment);
      } else if (c == '/' && At(i + 1) == '*') {
        i = MarkFrom(i, BlockComment(i), kComment);
      } else if (c == '$') {
        i = Dollar(i);
      } else if (IsDigit(c) || (c == '.' && IsDigit(At(i + 1)))) {
        i = MarkFrom(i, Number(i), kLiteral);
      } else if (IsIdentStart(c)) {
        i = Word(i);
      } else {
        ++i;
      }
    }
  }

 private:
  char At(size_t i) const { return i < sql_.size() ? sql_[i] : '\0'; }

  size_t MarkFrom(size_t from, size_t to, Mark mark) {
    if (to > sql_.size()) to = sql_.size();
    for (size_t i = from; i < to; ++i) marks_[i] |= mark;
    return to;
  }

  // A quoted string whose opening quote is at `quote`, with '' inside and
  // continuation segments ('a'<newline>'b' is one literal); the index past it.
  size_t String(size_t quote, bool backslash) const {
    const size_t n = sql_.size();
    size_t i = quote + 1;
    while (i < n) {
      char c = sql_[i];
      if (backslash && c == '\\') {
        i += 2;
      } else if (c != '\'') {
        ++i;
      } else if (At(i + 1) == '\'') {
        i += 2;
      } else {
        ++i;  // the closing quote; a continuation needs a newline before the next quote
        size_t j = i;
        bool newline = false;
        while (j < n && IsSpace(sql_[j])) newline |= IsNewline(sql_[j++]);
        if (!newline || j >= n || sql_[j] != '\'') return i;
        i = j + 1;
      }
    }
    return n;
  }

  size_t QuotedIdentifier(size_t quote) const {
    const size_t n = sql_.size();
    size_t i = quote + 1;
    while (i < n) {
      if (sql_[i] != '"') {
        ++i;
      } else if (At(i + 1) == '"') {
        i += 2;
      } else {
        return i + 1;
      }
    }
    return n;
  }

  // Nested /* */, as the server reads them; the index past the comment.
  size_t BlockComment(size_t start) const {
    const size_t n = sql_.size();
    size_t depth = 1;
    size_t i = start + 2;
    while (i < n && depth > 0) {
      if (sql_[i] == '/' && At(i + 1) == '*') {
        ++depth;
        i += 2;
      } else if (sql_[i] == '*' && At(i + 1) == '/') {
        --depth;
        i += 2;
      } else {
        ++i;
      }
    }
    return i;
  }

  // A parameter ($1: code), a dollar-quoted string ($$...$$, $tag$...$tag$:
  // a literal to its closing delimiter or the end) or a lone '$'.
  size_t Dollar(size_t start) {
    const size_t n = sql_.size();
    if (IsDigit(At(start + 1))) {
      size_t i = start + 1;
      while (i < n && IsDigit(sql_[i])) ++i;
      return i;
    }
    if (At(start + 1) != '$' && !IsIdentStart(At(start + 1))) return start + 1;
    size_t i = start + 1;
    while (i < n && IsTagChar(sql_[i])) ++i;
    if (i >= n || sql_[i] != '$') return start + 1;  // "$name": no dollar quote
    std::string_view delimiter = sql_.substr(start, i + 1 - start);
    // A tag has no '$' inside: each comparison stops before the next '$' of
    // the body, so the search is linear.
    for (size_t p = sql_.find('$', i + 1); p != std::string_view::npos; p = sql_.find('$', p + 1)) {
      if (sql_.compare(p, delimiter.size(), delimiter) == 0) {
        return MarkFrom(start, p + delimiter.size(), kLiteral);
      }
    }
    return MarkFrom(start, n, kLiteral);
  }

  // 42, 4.2, .42, 4e-2, 0x2A, 1_000, and any letters stuck to them (which
  // the server rejects or reads as an alias): all of it is hidden.
  size_t Number(size_t start) const {
    const size_t n = sql_.size();
    size_t i = start;
    while (i < n && IsNumberChar(sql_[i])) {
      char c = sql_[i++];
      if ((c == 'e' || c == 'E') && (At(i) == '+' || At(i) == '-') && IsDigit(At(i + 1))) i += 2;
    }
    return i;
  }

  // A keyword or identifier, or the one-letter prefix of a string: E'..',
  // B'..', X'..', N'..', U&'..' (and U&"..", an identifier).
  size_t Word(size_t start) {
    const size_t n = sql_.size();
    size_t end = start;
    while (end < n && IsIdentCont(sql_[end])) ++end;
    if (end - start != 1) return end;
    char c = sql_[start];
    if (At(end) == '\'') {
      switch (c) {
        case 'e': case 'E':
          return MarkFrom(start, String(end, true), kLiteral);
        case 'b': case 'B': case 'x': case 'X':
          return MarkFrom(start, String(end, false), kLiteral);
        case 'n': case 'N':
          return MarkFrom(start, String(end, plain_backslash_), kLiteral);
        default:
          return end;
      }
    }
    if ((c == 'u' || c == 'U') && At(end) == '&') {
      if (At(end + 1) == '\'') return MarkFrom(start, String(end + 1, false), kLiteral);
      if (At(end + 1) == '"') return QuotedIdentifier(end + 1);
    }
    return end;
  }

  std::string_view sql_;
  bool plain_backslash_;
  std::vector<std::uint8_t>& marks_;
};

// The highest $n the code uses, so that placeholders do not collide with it.
std::uint64_t HighestParam(std::string_view sql, const std::vector<std::uint8_t>& marks) {
  std::uint64_t highest = 0;
  for (size_t i = 0; i + 1 < sql.size(); ++i) {
    if (sql[i] != '$' || marks[i] != kCode) continue;
    if (i > 0 && marks[i - 1] == kCode && IsIdentCont(sql[i - 1])) continue;  // in a name
    std::uint64_t value = 0;
    size_t j = i + 1;
    for (; j < sql.size() && IsDigit(sql[j]) && marks[j] == kCode; ++j) {
      value = value * 10 + static_cast<std::uint64_t>(sql[j] - '0');
      if (value > kMaxParam) value = kMaxParam;
    }
    if (j > i + 1 && value > highest) highest = value;
    i = j - 1;
  }
  return highest;
}

}  // namespace

std::string NormalizeQuery(std::string_view sql) {
  std::vector<std::uint8_t> marks(sql.size(), kCode);
  Reading(sql, false, marks).Run();
  Reading(sql, true, marks).Run();
  std::uint64_t next = HighestParam(sql, marks) + 1;

  std::string out;
  out.reserve(sql.size());
  size_t i = 0;
  while (i < sql.size()) {
    if (marks[i] == kCode) {
      out.push_back(sql[i++]);
      continue;
    }
    bool literal = false;
    size_t end = i;
    for (; end < sql.size() && marks[end] != kCode; ++end) literal |= (marks[end] & kLiteral) != 0;
    if (literal) {
      out += "$" + std::to_string(next++);
    } else if (!out.empty() && !IsSpace(out.back()) && end < sql.size() && !IsSpace(sql[end])) {
      out.push_back(' ');  // a dropped comment still separates the tokens around it
    } else if (out.empty() || IsSpace(out.back())) {
      // One gap where the comment was, not the spaces on both sides of it.
      while (end < sql.size() && marks[end] == kCode && (sql[end] == ' ' || sql[end] == '\t')) {
        ++end;
      }
    }
    i = end;
  }
  return out;
}

}  // namespace seatwatch::locks
