#pragma once

#include <toml++/toml.h>

#include <string>

#include "config/config.h"
#include "config/table_reader.h"

namespace seatwatch::config {

// The section parsers ParseConfig wires together: each reads one table of
// the file into its part of Config through `reader` (which knows the file)
// and throws ConfigError naming file, line and key.

// The database and its lanes (parse_database.cc).
void ParseDatabase(TableReader& reader, DatabaseConfig& database);
void ParseChecks(TableReader& reader, Config& config);
void ParseChanges(TableReader& reader, Config& config);
void ParsePoll(TableReader& reader, PollConfig& poll);

// [http] with its TLS keys and [http.basic_auth] (parse_http.cc).
void ParseHttp(TableReader& reader, HttpConfig& http);

// The built-in checks (parse_builtin_checks.cc).
void ParseLocks(TableReader& reader, LocksConfig& locks);
void ParseHolds(TableReader& reader, HoldsConfig& holds);
void ParseCleanup(TableReader& reader, CleanupConfig& cleanup);

// Every [[invariant]] or [[metric]] entry under `node` (parse_entries.cc),
// then the names they define, unique across the file.
void ParseEntries(const toml::node* node, const std::string& key, QueryConfig::Kind kind,
                  const std::string& path, Config& config);
void CheckUniqueNames(const Config& config);
// A runbook_url: an http:// or https:// link without spaces or quotes; ""
// when not written.
std::string ReadRunbookUrl(TableReader& reader, const Location& where);

// An [[invariant]] with `kind` (parse_declarations.cc), checked against its
// kind's rules; then the declared entries of each check compiled into one
// query entry of `config` (compile_declarations.cc).
DeclaredEntry ParseDeclaredEntry(TableReader& reader);
// A [[metric]] with `kind` (parse_declared_metric.cc), compiled with its
// check's entries.
DeclaredMetric ParseDeclaredMetric(TableReader& reader);
void CompileDeclarations(Config& config);

// key, tables, scoped_sql and expiry_column of one entry
// (parse_incremental.cc); `query`'s labels, value and invariant column are
// read already.
void ParseIncremental(TableReader& reader, QueryConfig& query);

}  // namespace seatwatch::config
