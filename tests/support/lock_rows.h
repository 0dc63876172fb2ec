#pragma once

#include <string>
#include <vector>

#include "locks/lock_rows.h"

// Hand-made rows of a lock poll, as the lock reader returns them, for the
// unit tests of what a poll becomes (metrics, JSON, the status page).
namespace seatwatch::testing {

// A client backend of user "booking" in the watched database, in `state`
// with its transaction open `xact_age` seconds and its state `state_age`.
locks::SessionRow ClientSession(int pid, const std::string& state, double xact_age,
                                double state_age);

// `pid` waits `seconds` for a "tuple" lock on a row of seats (16400) or, for
// any other locktype, for transaction 777; blocked by `blockers`.
locks::LockWaitRow LockWait(int pid, const std::string& locktype, std::vector<int> blockers,
                            double seconds);

}  // namespace seatwatch::testing
