#pragma once

#include <string>

namespace seatwatch::config {
struct Config;
}

namespace seatwatch::changes {

// What --check-config says of the change feed, from the database itself:
// "incremental mode: on" or "incremental mode: off: <why>", then one line per
// change kind that cannot be mapped and per warning. The same text the
// daemon logs when its slot session first inspects the publication. Never
// throws: a failure to connect or inspect is the reason given.
std::string CheckFeed(const config::Config& config);

}  // namespace seatwatch::changes
