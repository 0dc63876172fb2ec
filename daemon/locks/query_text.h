#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace seatwatch::locks {

// How much of other sessions' query text the locks outputs (/api/locks, the
// --once forest, the lock wait log lines) show: [locks] show_query.
enum class QueryTextMode { kNone, kNormalized, kRaw };

// The text to show of `query` as pg_stat_activity has it: nothing for kNone,
// literals replaced by placeholders for kNormalized (NormalizeQuery), as is
// for kRaw; then cut to `max_characters` characters (0: no limit).
// Normalizing comes first, so that a cut never leaves the start of a literal
// outside the quotes that would hide it. Pure.
std::optional<std::string> ShownQueryText(QueryTextMode mode,
                                          const std::optional<std::string>& query,
                                          int max_characters);

// The first `max_characters` UTF-8 characters of `text`, never cut inside a
// multi-byte sequence (invalid bytes count as characters of their own).
std::string TruncateUtf8(std::string text, std::size_t max_characters);

}  // namespace seatwatch::locks
