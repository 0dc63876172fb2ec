#pragma once

#include <string>

#include <pqxx/connection>

namespace seatwatch::db {

// Names `sql` as the prepared statement `name` on `connection`, for a
// statement a session runs again and again (the change feed's every drain):
// the server parses and plans it on its first run and keeps a generic plan
// after a few, instead of planning each run. libpqxx sends the PREPARE on the
// first exec_prepared of each connection, so a session that reconnects
// prepares it again by itself; naming it again is free.
//
// Only on a session known to be direct: a transaction pooler runs each
// statement on whichever server connection is free, where the name is
// unknown. The checks lanes may run through one, so they name a statement
// only when their session's pooler probe said direct (QueryCache's
// RunRepeated); the change feed's plain session shares its DSN with the
// replication stream, which no transaction pooler passes.
void PrepareOn(pqxx::connection_base& connection, const std::string& name, const std::string& sql);

// A name for `sql` as a prepared statement: the same for the same text for
// the life of the process, another for every other text (any session may
// prepare it under that name). Thread-safe.
std::string StatementName(const std::string& sql);

}  // namespace seatwatch::db
