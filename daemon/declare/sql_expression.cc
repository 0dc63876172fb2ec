#include "declare/sql_expression.h"

#include <cctype>

namespace seatwatch::declare {

namespace {

bool IsTagChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The end of the quoted run starting at `i` (text[i] is the quote), or npos.
size_t SkipQuoted(const std::string& text, size_t i, char quote, bool backslashes) {
  for (size_t j = i + 1; j < text.size(); ++j) {
    if (backslashes && text[j] == '\\') {
      ++j;
      continue;
    }
    if (text[j] != quote) continue;
    if (j + 1 < text.size() && text[j + 1] == quote) {
      ++j;
      continue;
    }
    return j;
  }
  return std::string::npos;
}

// /* ... */ nests in PostgreSQL.
size_t SkipBlockComment(const std::string& text, size_t i) {
  int depth = 0;
  for (size_t j = i; j + 1 < text.size(); ++j) {
    if (text[j] == '/' && text[j + 1] == '*') {
      ++depth;
      ++j;
    } else if (text[j] == '*' && text[j + 1] == '/') {
      ++j;
      if (--depth == 0) return j;
    }
  }
  return std::string::npos;
}

}  // namespace

std::string ExpressionProblem(const std::string& text) {
  if (text.size() > kMaxExpressionLength) {
    return "is " + std::to_string(text.size()) + " bytes; at most " +
           std::to_string(kMaxExpressionLength) + " are allowed";
  }
  bool blank = true;
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\0') return "holds a NUL byte";
    if (!std::isspace(static_cast<unsigned char>(c))) blank = false;
    size_t end = i;
    if (c == '\'') {
      bool escapes = i > 0 && (text[i - 1] == 'E' || text[i - 1] == 'e') &&
                     (i < 2 || !IsTagChar(text[i - 2]));
      end = SkipQuoted(text, i, '\'', escapes);
      if (end == std::string::npos) return "has a string that does not end";
    } else if (c == '"') {
      end = SkipQuoted(text, i, '"', false);
      if (end == std::string::npos) return "has a quoted name that does not end";
    } else if (c == '-' && i + 1 < text.size() && text[i + 1] == '-') {
      end = text.find('\n', i);
      if (end == std::string::npos) end = text.size();
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      end = SkipBlockComment(text, i);
      if (end == std::string::npos) return "has a comment that does not end";
    } else if (c == '$') {
      size_t j = i + 1;
      if (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) {
        return "uses a parameter ($" + std::string(1, text[j]) +
               "...): write the value itself";
      }
      bool after_word = i > 0 && IsTagChar(text[i - 1]);
      while (j < text.size() && IsTagChar(text[j])) ++j;
      if (!after_word && j < text.size() && text[j] == '$') {
        std::string tag = text.substr(i, j - i + 1);
        size_t close = text.find(tag, j + 1);
        if (close == std::string::npos) return "has a " + tag + " string that does not end";
        end = close + tag.size() - 1;
      }
    } else if (c == '(') {
      ++depth;
    } else if (c == ')') {
      if (--depth < 0) return "closes a parenthesis it did not open";
    } else if (c == ';') {
      return "has a ';': it must be one expression, not statements";
    }
    i = end;
  }
  if (depth > 0) return "leaves a parenthesis open";
  if (blank) return "is empty";
  return "";
}

}  // namespace seatwatch::declare
