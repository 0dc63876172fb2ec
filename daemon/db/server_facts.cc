#include "db/server_facts.h"

#include <pqxx/except>
#include <pqxx/nontransaction>

#include "util/log.h"

namespace seatwatch::db {

namespace {

// Replay lag as ServerFacts defines it: 0 on a primary and on a
// standby that has replayed all it received (an idle primary sends nothing,
// so the age of the last replayed commit would say nothing); else the age
// of the last replayed commit (of the start, before any was replayed).
constexpr const char* kFacts =
    "SELECT pg_is_in_recovery(), "
    "CASE WHEN NOT pg_is_in_recovery() THEN 0 "
    "WHEN pg_last_wal_receive_lsn() IS NOT NULL "
    "AND pg_last_wal_receive_lsn() <= pg_last_wal_replay_lsn() THEN 0 "
    "ELSE greatest(0, extract(epoch FROM now() - coalesce(pg_last_xact_replay_timestamp(), "
    "pg_postmaster_start_time()))) END";

// The identity: the timeline a primary writes is in the name of its current
// WAL file (a promotion raises it at once); a standby has no current WAL
// position, so its last restartpoint's timeline.
constexpr const char* kIdentity =
    ", (SELECT system_identifier FROM pg_control_system())::text, "
    "CASE WHEN pg_is_in_recovery() THEN (SELECT timeline_id FROM pg_control_checkpoint()) "
    "ELSE ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int END";

ServerFacts Query(pqxx::connection& connection, bool identity) {
  pqxx::nontransaction tx(connection, "seatwatch_server_facts");
  pqxx::row row = tx.exec1(std::string(kFacts) + (identity ? kIdentity : ""));
  ServerFacts facts;
  facts.in_recovery = row[0].as<bool>();
  facts.replica_lag_seconds = row[1].as<double>();
  if (identity) {
    facts.system_identifier = row[2].as<std::string>("");
    facts.timeline = static_cast<std::uint32_t>(row[3].as<long long>(0));
  }
  return facts;
}

}  // namespace

ServerFacts ServerFactsReader::Read(pqxx::connection& connection) {
  if (reads_identity_) {
    try {
      return Query(connection, true);
    } catch (const pqxx::insufficient_privilege& e) {
      // 42501; libpqxx 6.4 throws this class without the SQLSTATE itself.
      reads_identity_ = false;
      // pg_monitor would not help: these functions are PUBLIC's by default,
      // and a revoke from PUBLIC is undone only by a grant of their own.
      log::Warn("cannot read the server's identity: grant EXECUTE ON FUNCTION "
                "pg_control_system(), pg_control_checkpoint() to seatwatch's role; failovers "
                "are not counted",
                {{"lane", lane_}, {"error", e.what()}});
    }
  }
  return Query(connection, false);
}

}  // namespace seatwatch::db
