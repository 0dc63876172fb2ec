#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace seatwatch::config {

// Character-by-character checks of the names a config gives. They replace
// std::regex, whose matcher recurses once per character and overflowed the
// stack on a 50,000-character name; these run in constant stack. Lengths are
// capped by the callers before anything is echoed in an error.

// Check, metric and invariant names: they become series names and label
// values, and are echoed in logs.
constexpr size_t kMaxNameLength = 128;
// Result columns (labels, value, invariant_column): PostgreSQL truncates an
// identifier to NAMEDATALEN - 1 = 63 bytes, so a longer one can never match.
constexpr size_t kMaxColumnLength = 63;
// "schema.table", each part an identifier.
constexpr size_t kMaxTableNameLength = 2 * kMaxColumnLength + 1;
// HOST:PORT: a DNS name has at most 253 characters, a port 5 digits.
constexpr size_t kMaxListenLength = 253 + 1 + 5;

// [a-z_][a-z0-9_]*
bool IsIdentifier(std::string_view name);

// [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__" (reserved by Prometheus).
bool IsLabelName(std::string_view name);

// A lower-case table name, optionally schema-qualified:
// ([a-z_][a-z0-9_$]*\.)?[a-z_][a-z0-9_$]*
bool IsTableName(std::string_view name);

// HOST:PORT as CivetWeb takes it: HOST is empty, [IPv6] or letters, digits
// and ".-_"; PORT is 1..65535 in decimal digits.
bool IsListenAddress(std::string_view address);

// Any byte below 0x20, or DEL. `allowed` lists control characters that are
// fine here (e.g. "\n\t" for help text).
bool HasControlCharacter(std::string_view text, std::string_view allowed = {});

// `text` in double quotes with control characters as \xNN, for error
// messages; callers cap its length first.
std::string Printable(std::string_view text);

}  // namespace seatwatch::config
