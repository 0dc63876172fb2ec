#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>

namespace seatwatch::config {
struct Config;
}

namespace seatwatch::changes {

// The names an SQL text could use for a column: its unquoted identifiers,
// folded to lower case as PostgreSQL folds them (less the reserved key words,
// which cannot name a column unquoted), and its "quoted" ones as written. Strings, comments, numbers and $n parameters are skipped. The
// change feed keeps old and new values only of the watched tables' columns
// whose names are among them: the columns the checks read, never one they
// do not (a token that is a keyword or a function name matches no column, or
// one of that name, which the checks then may read). Pure.
std::set<std::string> SqlWords(std::string_view sql);

// Each table the incremental entries of `config` watch -> the names of the
// columns those entries read: for a declared check, what its declarations
// name (columns, keys, expiry, limit and counter columns, the words of where,
// sum and condition); for hand-written SQL, the SqlWords of sql and
// scoped_sql. What the setup script publishes and the change feed keeps
// values of, for provenance.
std::map<std::string, std::set<std::string>> MonitoredWords(const config::Config& config);

}  // namespace seatwatch::changes
