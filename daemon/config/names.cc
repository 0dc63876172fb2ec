#include "config/names.h"

#include <cstdio>

namespace seatwatch::config {

namespace {

bool IsLower(char c) { return (c >= 'a' && c <= 'z') || c == '_'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsLetter(char c) { return IsLower(c) || (c >= 'A' && c <= 'Z'); }
bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// [a-z_][a-z0-9_$]*
bool IsTablePart(std::string_view part) {
  if (part.empty() || !IsLower(part[0])) return false;
  for (char c : part) {
    if (!IsLower(c) && !IsDigit(c) && c != '$') return false;
  }
  return true;
}

bool IsHostName(std::string_view host) {
  for (char c : host) {
    if (!IsLetter(c) && !IsDigit(c) && c != '.' && c != '-') return false;
  }
  return true;
}

// What goes between the brackets of [IPv6]: hex digits, ':' and '.'
// (an embedded IPv4), at least one character.
bool IsBracketedAddress(std::string_view inside) {
  if (inside.empty()) return false;
  for (char c : inside) {
    if (!IsHex(c) && c != ':' && c != '.') return false;
  }
  return true;
}

}  // namespace

bool IsIdentifier(std::string_view name) {
  if (name.empty() || !IsLower(name[0])) return false;
  for (char c : name) {
    if (!IsLower(c) && !IsDigit(c)) return false;
  }
  return true;
}

bool IsLabelName(std::string_view name) {
  if (name.empty() || !IsLetter(name[0])) return false;
  for (char c : name) {
    if (!IsLetter(c) && !IsDigit(c)) return false;
  }
  return name.substr(0, 2) != "__";
}

bool IsTableName(std::string_view name) {
  size_t dot = name.find('.');
  if (dot == std::string_view::npos) return IsTablePart(name);
  return IsTablePart(name.substr(0, dot)) && IsTablePart(name.substr(dot + 1));
}

bool IsListenAddress(std::string_view address) {
  size_t colon = address.rfind(':');
  if (colon == std::string_view::npos) return false;
  std::string_view host = address.substr(0, colon);
  std::string_view port = address.substr(colon + 1);
  if (port.empty() || port.size() > 5) return false;
  long value = 0;
  for (char c : port) {
    if (!IsDigit(c)) return false;
    value = value * 10 + (c - '0');
  }
  if (value < 1 || value > 65535) return false;
  if (!host.empty() && host.front() == '[') {
    return host.size() >= 2 && host.back() == ']' &&
           IsBracketedAddress(host.substr(1, host.size() - 2));
  }
  return IsHostName(host);
}

bool HasControlCharacter(std::string_view text, std::string_view allowed) {
  for (char c : text) {
    auto byte = static_cast<unsigned char>(c);
    if ((byte < 0x20 || byte == 0x7f) && allowed.find(c) == std::string_view::npos) return true;
  }
  return false;
}

std::string Printable(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
      out += escaped;
    } else {
      out.push_back(c);
    }
  }
  out.push_back('"');
  return out;
}

}  // namespace seatwatch::config
