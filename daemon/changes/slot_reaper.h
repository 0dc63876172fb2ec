#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <pqxx/connection>

namespace seatwatch::changes {

// A slot session the feed gave up (stalled, timed out, failed): its
// temporary slot and the backend that holds it.
struct GivenUpSlot {
  std::string slot_name;
  int backend_pid = 0;
};

struct ReapResult {
  std::vector<GivenUpSlot> ended;      // backends terminated here
  std::vector<std::string> dropped;    // inactive slots of the prefix dropped
  std::vector<GivenUpSlot> remaining;  // given-up slots still there after the wait
  int inactive_left = 0;               // inactive slots of the prefix it could not drop
};

// Ends on the server what the feed gave up, on `connection`, a fresh
// session that holds no slot yet (so an error here costs no slot). A
// temporary slot goes only with its backend, and a backend whose client
// vanished behind a stalled path lives on until TCP keepalive gives up
// (two hours by default), holding WAL: so each given-up slot still held by
// its own backend has that backend terminated (a role may terminate its own
// backends), and the call waits, at most `wait`, until those slots and
// backends are gone. Inactive slots named like the feed's
// ("<prefix>_<pid>_<n>") are dropped too: the feed makes only temporary
// slots, which are never inactive, so such a slot is a leftover that holds
// WAL for nobody. Slots of the prefix held by other live backends (another
// seatwatch process) are left alone. Throws only what a broken connection
// throws; an SQL error leaves the slot it concerns in the result.
ReapResult ReapSlots(pqxx::connection& connection, const std::vector<GivenUpSlot>& given_up,
                     const std::string& prefix, std::chrono::milliseconds wait);

// The given-up slots that still exist (a read of pg_replication_slots only).
std::vector<GivenUpSlot> StillThere(pqxx::connection& connection,
                                    const std::vector<GivenUpSlot>& given_up);

}  // namespace seatwatch::changes
