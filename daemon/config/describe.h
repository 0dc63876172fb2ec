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

}  // namespace seatwatch::config
