#pragma once

#include <map>
#include <set>
#include <string>

#include <chrono>

#include "changes/change_batch.h"
#include "changes/change_feed.h"
#include "config/config.h"

// What the change-feed suites share: the booking tables as an incremental
// entry watches them, a config with one such entry, the feed's options, and
// the keys a batch names.
namespace seatwatch::testing {

// seats, tickets and payments, each keyed by event_id.
std::map<std::string, std::string> BookingTables();

// [changes] on, on `dsn`, with one incremental entry over BookingTables().
config::Config IncrementalConfig(const std::string& dsn);

// A feed over BookingTables() through publication "seatwatch" on `dsn`,
// its slots named `prefix`_<pid>_<n>: 5 s statement timeout, 2 s to create
// a slot, reconnects at most `reconnect_max_backoff` apart.
changes::ChangeFeedOptions BookingFeedOptions(
    const std::string& dsn, const std::string& prefix,
    std::chrono::milliseconds reconnect_max_backoff = std::chrono::seconds(1));

// The keys of `table` over every transaction of `batch`.
std::set<std::string> KeysOf(const changes::ChangeBatch& batch, const std::string& table);

}  // namespace seatwatch::testing
