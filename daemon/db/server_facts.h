#pragma once

#include <cstdint>
#include <string>

#include <pqxx/connection>

namespace seatwatch::db {

// What a lane learnt of the server it reads, on its last poll (see
// ServerFactsReader): whether it is a standby, how far behind, and which
// server it is (system identifier and timeline), so that a failover is seen
// even by a lane that kept its connection through the promotion.
struct ServerFacts {
  bool in_recovery = false;
  // How late what a check reads there may be, in seconds. 0 on a primary,
  // and on a standby that has replayed everything it has received: an idle
  // primary sends nothing, so the age of the last replayed transaction says
  // nothing then. While received WAL waits to be replayed (replay paused, a
  // recovery conflict holding it back, a slow standby): now() minus
  // pg_last_xact_replay_timestamp() (pg_postmaster_start_time() before any
  // transaction was replayed). A standby fed only from an archive (no WAL
  // receiver): the age of the last replayed transaction, as it cannot tell
  // idle from behind.
  double replica_lag_seconds = 0;
  // pg_control_system().system_identifier as decimal text; empty when the
  // role may not read it.
  std::string system_identifier;
  // The timeline the server is on: on a primary the one it writes
  // (pg_walfile_name(pg_current_wal_lsn())), which a promotion raises at
  // once; on a standby pg_control_checkpoint().timeline_id. 0 when unknown.
  std::uint32_t timeline = 0;
};

// Reads what a lane needs to know of the server it is connected to (see
// ServerFacts): one statement outside any transaction, bounded by
// the session's statement_timeout like any other. Throws what libpqxx
// throws when it cannot read them.
//
// A server whose administrator revoked EXECUTE on pg_control_system() or
// pg_control_checkpoint() (SQLSTATE 42501) still tells whether it is a
// standby and how far behind: the reader then falls back, for good, to the
// query without the server's identity (system_identifier "", timeline 0),
// and says so once. One reader per session owner; not thread-safe.
class ServerFactsReader {
 public:
  // `lane` names the reader in its one warning.
  explicit ServerFactsReader(std::string lane) : lane_(std::move(lane)) {}

  ServerFacts Read(pqxx::connection& connection);

  bool reads_identity() const { return reads_identity_; }

 private:
  std::string lane_;
  bool reads_identity_ = true;
};

}  // namespace seatwatch::db
