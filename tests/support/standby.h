#pragma once

#include <string>

namespace seatwatch::testing {

// A streaming standby of the scratch cluster (TEST_PG_DIR), made for one
// test: `scripts/pg-scratch standby <temp dir> $TEST_PG_DIR` (pg_basebackup
// -R, started with the primary's settings plus `server_options`, e.g.
// "-c max_standby_streaming_delay=1s"), destroyed when the object goes away.
// The constructor returns once the standby accepts connections and is in
// recovery; it throws if pg-scratch fails. After Promote() it is a primary
// of its own (a new timeline), apart from the shared cluster, which it never
// touches. Not thread-safe.
class ScratchStandby {
 public:
  explicit ScratchStandby(const std::string& server_options = "");
  ~ScratchStandby();
  ScratchStandby(const ScratchStandby&) = delete;
  ScratchStandby& operator=(const ScratchStandby&) = delete;

  // The folder pg-scratch manages (port, sock, env, postgres.log).
  const std::string& dir() const { return dir_; }
  int port() const { return port_; }
  // libpq connection string for `dbname` on the standby, as `user`.
  std::string Dsn(const std::string& dbname, const std::string& user = "postgres") const;
  // Runs SQL in its own autocommitted transaction on the standby.
  void Exec(const std::string& dbname, const std::string& sql) const;
  // The first column of the first row, as text ("" for none or NULL).
  std::string Scalar(const std::string& dbname, const std::string& sql) const;
  // `pg-scratch promote`: returns once pg_is_in_recovery() is false. Throws
  // if it fails.
  void Promote();
  // Waits until the standby has replayed the primary's current WAL position
  // (pg_current_wal_lsn() there, then pg_last_wal_replay_lsn() here); throws
  // after `timeout_seconds`.
  void WaitReplayed(double timeout_seconds = 30) const;
  // The standby server's log, for a failure message.
  std::string Log() const;

 private:
  std::string script_;
  std::string dir_;
  int port_ = 0;
};

}  // namespace seatwatch::testing
