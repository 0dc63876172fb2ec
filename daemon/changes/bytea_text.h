#pragma once

#include <string>
#include <string_view>

namespace seatwatch::changes {

// Decodes the text form of a bytea value in the hex format ("\x" then two
// hex digits per byte, either case; bytea_output = 'hex', the server's
// default), as libpqxx returns the `data` column of
// pg_logical_slot_get_binary_changes. Throws PgoutputError for anything
// else, including the legacy escape format: the slot session should not
// change bytea_output, and a wrong guess must not decode into garbage.
//
// Why not pqxx::binarystring: it needs a pqxx::field (so a test or the fuzz
// target cannot feed it text), and it goes through PQunescapeBytea, which
// accepts the escape format too and reports a malformed value only as a
// failed allocation. This is strict, pure and tested on captured text.
std::string DecodeByteaText(std::string_view text);

}  // namespace seatwatch::changes
