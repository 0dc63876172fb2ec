#pragma once

#include <pqxx/connection>

namespace seatwatch::db {

// Whether the connection is still usable, as far as the client can tell
// without a round trip: reads, without blocking, whatever the server has
// sent (the FATAL it sends before closing a session it terminates, the end
// of the stream). A connection the server closed while it was idle
// (pg_terminate_backend, idle_session_timeout, a restart) is found here
// instead of by the next statement, whose failure costs a leak: libpqxx 6.4
// asks a broken connection for its client encoding before it takes
// ownership of the statement's PGresult, the lookup throws, and the result
// (about 2.3 KB) is never freed. Same thread-safety as the connection.
bool StillConnected(pqxx::connection& connection);

}  // namespace seatwatch::db
