#pragma once

#include <string>
#include <string_view>

namespace seatwatch::locks {

// Other sessions' query text with every literal replaced by a placeholder,
// the way pg_stat_statements shows statements: $1, $2, ... in order of
// appearance, numbered after the highest $n the text already uses.
//
// Replaced: numbers; '...' strings (with '' inside), E'...' (backslash
// escapes), U&'...', B'...', X'...', N'...'; $$...$$ and $tag$...$tag$;
// literals continued across a newline ('a'\n'b') count as one. Kept as they
// are: keywords, identifiers, "quoted identifiers", $n parameters, operators
// and type casts (x::int). Comments (-- and nested /* */) are dropped,
// unlike pg_stat_statements: a comment is free text that can carry a secret.
// A lone minus stays before the placeholder ("-$1" where the server would
// fold it into the constant).
//
// The text may come from any session with any setting: it is lexed both with
// standard_conforming_strings on (backslash is literal in '...') and off
// (it escapes), and whatever either reading takes for a literal or a comment
// is hidden. An unterminated string, quote or comment (pg_stat_activity cuts
// texts at track_activity_query_size) runs to the end and is hidden.
//
// Total on any bytes (NULs, invalid UTF-8, which is copied as is outside
// literals) and linear in the input's length. Pure and thread-safe.
std::string NormalizeQuery(std::string_view sql);

}  // namespace seatwatch::locks
