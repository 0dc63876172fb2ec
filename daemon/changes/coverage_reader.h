#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include <pqxx/connection>

#include "changes/coverage.h"

namespace seatwatch::changes {

// Reads the coverage of `publication` over the watched `tables` (table ->
// key column, named as in the entries: a plain name in any schema,
// "schema.name" exactly) and over the relations of `known_oids` whatever
// their names now (a watched table renamed away). Two small catalog
// queries, read-only: cheap enough for every drain, and safe on the slot
// session (no statement here can fail on a healthy server). Named prepared
// statements on `connection` (db::PrepareOn): a direct session only. Throws what the
// connection throws.
Coverage ReadCoverage(pqxx::connection& connection, const std::string& publication,
                      const std::map<std::string, std::string>& tables,
                      const std::set<std::uint32_t>& known_oids);

}  // namespace seatwatch::changes
