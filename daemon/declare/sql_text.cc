#include "declare/sql_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "declare/identifier.h"

namespace seatwatch::declare {

std::string Col(const std::string& alias, const std::string& column) {
  return alias + "." + QuoteIdentifier(column);
}

std::string Cols(const std::string& alias, const std::vector<std::string>& columns) {
  std::string out;
  for (const auto& column : columns) out += (out.empty() ? "" : ", ") + Col(alias, column);
  return out;
}

std::string From(const TableName& table, const std::string& alias) {
  return QuoteTable(table) + " AS " + alias;
}

std::string Pasted(const std::string& expression) { return "(\n" + expression + "\n)"; }

std::string Equal(const std::string& a, const std::vector<std::string>& a_columns,
                  const std::string& b, const std::vector<std::string>& b_columns) {
  std::string out;
  for (size_t i = 0; i < a_columns.size() && i < b_columns.size(); ++i) {
    out += (out.empty() ? "" : " AND ") + Col(a, a_columns[i]) + " = " + Col(b, b_columns[i]);
  }
  return out;
}

std::string NotNull(const std::string& alias, const std::vector<std::string>& columns) {
  std::string out;
  for (const auto& column : columns) {
    out += (out.empty() ? "" : " AND ") + Col(alias, column) + " IS NOT NULL";
  }
  return out;
}

std::string KeyAsLabels(const std::string& alias, const std::vector<std::string>& key,
                        const std::vector<std::string>& labels) {
  std::string out;
  for (size_t i = 0; i < key.size(); ++i) {
    out += (out.empty() ? "" : ", ") + Col(alias, key[i]) + " AS " + QuoteIdentifier(labels[i]);
  }
  return out;
}

std::vector<size_t> Positions(const std::vector<std::string>& wanted,
                              const std::vector<std::string>& columns, const std::string& field,
                              const std::string& what) {
  std::vector<size_t> out;
  for (const auto& name : wanted) {
    auto it = std::find(columns.begin(), columns.end(), name);
    if (it == columns.end()) {
      throw DeclarationError(field, "\"" + name + "\" is not one of " + what);
    }
    out.push_back(static_cast<size_t>(it - columns.begin()));
  }
  return out;
}

std::vector<std::string> At(const std::vector<std::string>& columns,
                            const std::vector<size_t>& positions) {
  std::vector<std::string> out;
  for (size_t position : positions) out.push_back(columns.at(position));
  return out;
}

std::string Indented(const std::string& sql) {
  std::string out = "  ";
  for (char c : sql) {
    out += c;
    if (c == '\n') out += "  ";
  }
  return out;
}

std::string Literal(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    out += c;
    if (c == '\'') out += '\'';
  }
  return out + "'";
}

std::string Number(double value) {
  char text[64];
  if (std::floor(value) == value && std::fabs(value) < 1e15) {
    std::snprintf(text, sizeof text, "%.0f", value);
  } else {
    std::snprintf(text, sizeof text, "%.17g", value);
  }
  return text;
}

std::string KeyFilter::On(const std::string& alias, const std::vector<std::string>& columns) const {
  std::string out;
  if (!row.empty()) {
    for (size_t i = 0; i < columns.size(); ++i) {
      out += " AND " + Col(alias, columns[i]) + " = " + row + ".k" + std::to_string(i + 1);
    }
    return out;
  }
  for (size_t i = 0; i < params.size() && i < columns.size(); ++i) {
    out += " AND " + Col(alias, columns[i]) + " = ANY ($" + std::to_string(params[i]) + ")";
  }
  return out;
}

}  // namespace seatwatch::declare
