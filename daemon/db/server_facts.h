#pragma once

#include <string>

#include <pqxx/connection>

#include "metrics/server_facts.h"

namespace seatwatch::db {

// Reads what a lane needs to know of the server it is connected to (see
// metrics::ServerFacts): one statement outside any transaction, bounded by
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

  metrics::ServerFacts Read(pqxx::connection& connection);

  bool reads_identity() const { return reads_identity_; }

 private:
  std::string lane_;
  bool reads_identity_ = true;
};

}  // namespace seatwatch::db
