#pragma once

#include <string_view>

#include "changes/pgoutput_error.h"
#include "changes/pgoutput_messages.h"

namespace seatwatch::changes {

// Parses ONE pgoutput message of protocol version 1: the bytes of one `data`
// value of pg_logical_slot_get_binary_changes(slot, NULL, n,
// 'proto_version', '1', 'publication_names', ...). Reads Begin, Commit,
// Origin, Relation, Type, Insert, Update, Delete, Truncate and Message.
// Throws PgoutputError (type and byte offset in its text) for an empty,
// truncated or malformed message, an unknown type, or bytes left over; it
// never reads past the bytes, nor allocates for a count the bytes cannot
// hold. Tuple values and Message contents in the result are views into
// `bytes`. Pure and thread-safe.
PgoutputMessage ParsePgoutputMessage(std::string_view bytes);

// The name of a message's type ("Insert"), for logs and errors.
const char* PgoutputMessageName(const PgoutputMessage& message);

}  // namespace seatwatch::changes
