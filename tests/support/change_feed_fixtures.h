#pragma once

#include <map>
#include <set>
#include <string>

#include "changes/change_batch.h"
#include "config/config.h"

// What the change-feed suites share: the booking tables as an incremental
// entry watches them, a config with one such entry, and the keys a batch
// names.
namespace seatwatch::testing {

// seats, tickets and payments, each keyed by event_id.
std::map<std::string, std::string> BookingTables();

// [changes] on, on `dsn`, with one incremental entry over BookingTables().
config::Config IncrementalConfig(const std::string& dsn);

// The keys of `table` over every transaction of `batch`.
std::set<std::string> KeysOf(const changes::ChangeBatch& batch, const std::string& table);

}  // namespace seatwatch::testing
