#pragma once

#include "changes/change_feed.h"

namespace seatwatch::config {
struct Config;
}

namespace seatwatch::changes {

// The change feed's settings from the config: [changes] for the slot session
// ([database] for what [changes] does not set: connect and lock timeouts,
// reconnect backoff; application_name "<app>-changes"), and the union of the
// `tables` of every incremental entry. Throws std::invalid_argument when two
// entries give one table different key columns (one decoder serves all).
ChangeFeedOptions FeedOptionsOf(const config::Config& config);

}  // namespace seatwatch::changes
