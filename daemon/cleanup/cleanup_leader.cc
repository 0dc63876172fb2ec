#include "cleanup/cleanup_leader.h"

#include <string>

#include <pqxx/nontransaction>


namespace seatwatch::cleanup {

namespace {

// pg_locks shows a bigint advisory key split into its two 32-bit halves.
constexpr std::uint32_t kClassId = static_cast<std::uint32_t>(CleanupLeader::kLockKey >> 32);
constexpr std::uint32_t kObjId = static_cast<std::uint32_t>(CleanupLeader::kLockKey & 0xffffffff);

}  // namespace

bool CleanupLeader::Ensure(pqxx::connection& connection) {
  // Autocommit: the lock is the session's, not a transaction's.
  pqxx::nontransaction tx(connection, "seatwatch_cleanup_leader");
  auto row = tx.exec_params1(
      "SELECT CASE WHEN EXISTS (SELECT 1 FROM pg_locks"
      "                         WHERE locktype = 'advisory' AND pid = pg_backend_pid()"
      "                           AND database = (SELECT oid FROM pg_database"
      "                                           WHERE datname = current_database())"
      "                           AND classid = $1::oid AND objid = $2::oid AND objsubid = 1"
      "                           AND granted)"
      "            THEN true"
      "            ELSE pg_try_advisory_lock($3::bigint) END",
      std::to_string(kClassId), std::to_string(kObjId), std::to_string(kLockKey));
  return row[0].as<bool>();
}

}  // namespace seatwatch::cleanup
