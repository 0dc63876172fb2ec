#pragma once

#include <string>
#include <vector>

#include "config/config.h"

namespace seatwatch::config {

// What --check-config says of incremental mode, from the config alone (the
// feed's own verdict, from the database, is the change feed's to print): one
// line for [changes] when it is enabled or some entry is incremental, then
// one per incremental entry. Any DSN is shown masked.
std::vector<std::string> DescribeIncremental(const Config& config);

// What --check-config says of where each lane reads, one line per DSN,
// masked: "checks lane: <dsn> (may be a standby)" ("(that of [database]; ...)"
// without [checks] dsn), then "locks lane, cleanup: <dsn> (needs the primary)".
std::vector<std::string> DescribeLanes(const Config& config);

// The target_session_attrs that defeat the topology, each as one line
// "warning: [checks|database] dsn has target_session_attrs=X: why". [checks]
// dsn: primary (the checks lane will never use a standby), read-write (with
// seatwatch's read-only sessions libpq refuses every server) and read-only
// (libpq takes the primary too). [database] dsn: standby, read-only or
// prefer-standby (the cleanup and the change feed need the primary), and
// read-write (the read-only lanes never connect: primary is the one to use).
std::vector<std::string> LaneWarnings(const Config& config);

// One line for --check-config about [http]: plain HTTP or HTTPS (version,
// the certificate's serial, subject and end of validity, client
// certificates), and Basic auth (users, probes). Needs the TLS files read
// (LoadConfig).
std::string DescribeHttp(const Config& config);

}  // namespace seatwatch::config
