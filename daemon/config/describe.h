#pragma once

#include <cstdint>
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
// dsn: primary or read-write (the checks lane will never use a standby; its
// read-only session asks for read-write as primary). [database] dsn:
// standby, read-only or prefer-standby (the cleanup and the change feed need
// the primary).
std::vector<std::string> LaneWarnings(const Config& config);

// One line for --check-config about [http]: plain HTTP or HTTPS (version,
// the certificate's serial, subject and end of validity, client
// certificates), and Basic auth (users, probes). Needs the TLS files read
// (LoadConfig).
std::string DescribeHttp(const Config& config);

// "warning: ..." lines for --check-config about [http]: a certificate that
// expires within 14 days of `now` (unix seconds; LoadConfig has refused one
// that is expired or not yet valid).
std::vector<std::string> HttpWarnings(const Config& config, int64_t now);

}  // namespace seatwatch::config
