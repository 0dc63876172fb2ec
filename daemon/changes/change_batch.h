#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "metrics/provenance.h"

namespace seatwatch::changes {

// The keys one committed transaction changed, per watched table. The xid is
// the 32-bit one of pgoutput's Begin message: a recheck must first make sure
// its snapshot sees that transaction (a commit can be decoded before it is
// visible), so keys travel with the transaction that changed them.
struct TransactionChanges {
  // Row changes kept per transaction for provenance; past it, rows_truncated.
  static constexpr std::size_t kMaxRowChanges = 256;

  std::uint32_t xid = 0;
  // Watched table (as named in the entry's `tables`) -> key values, as text.
  std::map<std::string, std::set<std::string>> keys;
  // For provenance (pgoutput's Begin; 0 from a feed that does not say).
  std::uint64_t commit_lsn = 0;
  double commit_unix = 0;
  // Its changes of watched tables, one per change and key, with the
  // monitored columns only.
  std::vector<metrics::RowChange> rows;
  bool rows_truncated = false;
  // Watched table -> key -> the replica identity of each row the
  // transaction changed under that key (its identity columns' values, in
  // the relation's order; an update that moved a row gives its old identity
  // under the old key and its new one under the new): the rows a recheck
  // that follows rows must read again. Complete only while
  // identities_complete: a table whose identity does not name one row (FULL,
  // NOTHING), an identity value not carried as text, or more than
  // kMaxIdentities rows make it false, and the keys alone must do.
  static constexpr std::size_t kMaxIdentities = 10000;
  using Identity = std::vector<std::string>;
  struct TableIdentities {
    std::vector<std::string> columns;  // the identity's column names
    std::map<std::string, std::set<Identity>> by_key;
    bool operator==(const TableIdentities& o) const {
      return columns == o.columns && by_key == o.by_key;
    }
  };
  std::map<std::string, TableIdentities> identities;
  std::size_t identity_count = 0;
  bool identities_complete = true;
  // The session pg_stat_activity showed holding this xid, if one was seen.
  std::optional<metrics::SessionSeen> session;
};

// Why the change feed started over (a new slot), for
// seatwatch_changes_resyncs_total{reason}.
enum class ResyncReason { kStartup, kSlotLost, kError, kUnmappable, kDrainCost, kCoverage };

// What one drain of the change feed hands the poller, which passes it to
// every check that opted in (Check::AcceptChanges). Changes are in commit
// order; a batch never splits a transaction.
struct ChangeBatch {
  // False while there is no slot (not configured, cannot be created, lost):
  // incremental checks fall back to full passes at their normal interval.
  bool feed_up = false;
  // A new value whenever a new slot was created. Keys decoded under an
  // earlier generation say nothing about changes made before this slot's
  // consistent point: a check seeing a new generation needs a full pass.
  std::uint64_t generation = 0;
  // Transactions of the database that held an xid right after this
  // generation's slot was created (64-bit xids). One of them may have
  // committed before the consistent point without being visible yet (a
  // COMMIT waiting for a synchronous standby): the slot skips it. So the full
  // pass that seeds a generation only counts once every one of them has
  // ended and, if committed, is visible to it.
  std::vector<std::uint64_t> creation_xids;
  std::vector<TransactionChanges> transactions;
  // A change the feed could not map to keys (TRUNCATE of a watched table, a
  // delete or key update whose old key the replica identity does not carry):
  // every check needs a full pass. Empty when none.
  std::string unmappable;
  // With feed_up = false: the feed gave its slot up because the
  // publication's coverage of the watched tables changed, and it is not
  // whole again yet; what is missing ("table public.tickets is not in
  // publication seatwatch: ..."). Empty otherwise.
  std::string coverage_lost;
  // The slot's confirmed_flush_lsn after this drain, as bytes from 0/0 (0:
  // unknown): every transaction of the watched tables whose commit record
  // ends at or before it has been handed over, in this batch or an earlier
  // one of the same generation. A backstop full pass's differences wait for
  // it to pass that pass's WAL position (see BackstopAudit).
  std::uint64_t complete_through_lsn = 0;
};

}  // namespace seatwatch::changes
