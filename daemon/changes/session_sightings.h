#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "changes/change_batch.h"
#include "metrics/provenance.h"

namespace seatwatch::changes {

// Which session held which xid, as pg_stat_activity showed at each drain.
// PostgreSQL keeps no record of the session that committed a transaction:
// the only way to name it is to see the transaction while it runs. A
// transaction that began and committed between two drains is not seen.
// Bounded: at most kMaxSightings xids, the oldest forgotten first (an xid
// seen whose transaction touched no watched table is never asked for).
// Single-threaded (the feed's owner thread).
class SessionSightings {
 public:
  static constexpr std::size_t kMaxSightings = 10000;

  // pg_stat_activity's sessions holding an xid, as kSightingsColumn
  // aggregates them: "xid \x1f application \x1f user \x1f client" rows
  // joined by \x1e. A malformed row is skipped.
  void NoteAll(const std::string& aggregated);
  void Note(std::uint32_t xid, metrics::SessionSeen session);
  // Gives each transaction its session, if seen, and forgets it.
  void Attach(std::vector<TransactionChanges>& transactions);
  std::size_t size() const { return by_xid_.size(); }

  // The SQL expression (one text value) that aggregates pg_stat_activity's
  // sessions of this database holding an xid, the caller's own left out.
  static const char* const kSightingsColumn;

 private:
  std::map<std::uint32_t, metrics::SessionSeen> by_xid_;
  std::deque<std::uint32_t> order_;  // as noted; may hold xids already taken
};

}  // namespace seatwatch::changes
