#pragma once

#include <chrono>
#include <string>

#include <pqxx/transaction_base>

namespace seatwatch::db {

// What a monitoring transaction puts in force for itself before its first
// read. The connection options set the same for a direct connection, but a
// transaction pooler drops them (or lands the transaction on a server
// connection opened for another client), so every transaction sets them
// again with SET LOCAL, which lasts exactly as long as the transaction
// (read-only comes from the transaction's own BEGIN ... READ ONLY).
struct LocalSettings {
  std::chrono::milliseconds statement_timeout{5000};
  std::chrono::milliseconds lock_timeout{100};
};

// Pure: the statements, in one string, so that they cost one round trip.
// jit off and floats as exact text, as in the connection options (see
// conninfo.cc).
std::string SetLocalSql(const LocalSettings& settings);

// Runs SetLocalSql in `tx`. Throws what libpqxx throws.
void SetLocal(pqxx::transaction_base& tx, const LocalSettings& settings);

}  // namespace seatwatch::db
