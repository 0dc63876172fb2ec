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

// One line for --check-config about [http]: plain HTTP or HTTPS (version,
// the certificate's serial, subject and end of validity, client
// certificates), and Basic auth (users, probes). Needs the TLS files read
// (LoadConfig).
std::string DescribeHttp(const Config& config);

}  // namespace seatwatch::config
