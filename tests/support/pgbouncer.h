#pragma once

#include <sys/types.h>

#include <string>

namespace seatwatch::testing {

// A real PgBouncer (Debian's /usr/sbin/pgbouncer) in transaction pool mode
// on a free loopback port, in front of one database of the scratch cluster,
// with trust authentication for the listed user. Run as the "postgres" OS
// user when the test runs as root (PgBouncer refuses root). Stopped by its
// PID (SIGTERM, then SIGKILL) in the destructor, its folder removed.
class PgBouncer {
 public:
  struct Options {
    std::string dbname;
    std::string user;
    int pool_size = 2;  // small, so that the clients share server connections
    // PgBouncer refuses libpq's `options` startup parameter unless told to
    // ignore it, which then drops what it carries.
    bool ignore_options = true;
  };

  explicit PgBouncer(const Options& options);
  ~PgBouncer();
  PgBouncer(const PgBouncer&) = delete;
  PgBouncer& operator=(const PgBouncer&) = delete;

  int port() const { return port_; }
  // key=value DSN of the database through the pooler, as `user`.
  std::string dsn() const;
  std::string Log() const;

 private:
  Options options_;
  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace seatwatch::testing
