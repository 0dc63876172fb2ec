#pragma once

#include <cstddef>
#include <string>

namespace seatwatch::declare {

// The most bytes a `where`, `condition` or `sum` may have.
constexpr size_t kMaxExpressionLength = 8192;

// Refuses an operator's SQL expression that could reach outside the
// parentheses it is pasted into: parentheses must balance and never close
// one they did not open, and no `;` or `$n` may stand outside strings,
// quoted names and comments; strings and comments must end. Returns the
// problem, or "" when the text may be pasted. The database proves the rest
// (that it is a boolean, that its columns exist) when --check-config runs it.
std::string ExpressionProblem(const std::string& text);

}  // namespace seatwatch::declare
