#pragma once

#include <map>
#include <set>
#include <string>

#include "config/config.h"

namespace seatwatch::changes {

// Each table the incremental entries read ("seats", "schema.name", as the
// config names it) with the columns their changes are mapped to keys by.
std::map<std::string, std::set<std::string>> KeyedTables(const config::Config& config);

// The DBA's script that prepares the database for the change feed on exactly
// the tables of KeyedTables(config), for psql (it uses \gexec, and runs
// outside a transaction): a unique index that carries the key where a table
// has none and a primary key to extend (built CONCURRENTLY), a replica
// identity that carries the key (USING INDEX where an index allows, FULL
// otherwise), then the publication [changes] publication names, with
// column lists where the replica identity allows and through the partition
// root. Idempotent; every decision is taken by the script on the database it
// runs on. queries/booking/changes-setup.sql is its output for the shipped
// config.
std::string SetupScript(const config::Config& config);

}  // namespace seatwatch::changes
