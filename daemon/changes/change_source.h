#pragma once

#include <memory>
#include <string>

#include <pqxx/connection>

#include "changes/change_batch.h"

namespace seatwatch::config {
struct Config;
}

namespace seatwatch::changes {

// Where the checks lane's poller gets "which keys changed since the last
// drain". The implementation (ChangeFeed) owns a dedicated connection that
// runs nothing but slot functions on one temporary logical replication slot;
// the poller only sees batches, never the slot.
//
// Thread-safety: Drain(), NoteFullPassCost() and shared_connection() from the
// owner thread (the checks lane); RenderMetrics() and Abort() from any thread.
class ChangeSource {
 public:
  virtual ~ChangeSource() = default;

  // Reads what was committed since the last drain (at most [changes]
  // max_changes changes, never splitting a transaction). Creates the slot
  // first when there is none (bounded by [changes] create_timeout, retried
  // with the session's reconnect backoff). Never throws: any failure is a
  // batch with feed_up = false (and, once a slot comes back, a new
  // generation), logged and counted in seatwatch_changes_resyncs_total.
  virtual ChangeBatch Drain() = 0;

  // The seatwatch_changes_* families in the text exposition format (HELP and
  // TYPE included), from the last drain: never touches the database.
  virtual std::string RenderMetrics() const = 0;

  // What the last full pass of the incremental checks cost (seconds of wall
  // time). A drain slower than that is not worth it: the feed drops its slot
  // and starts over at the current WAL (resync reason drain_cost), so that
  // the expensive WAL is not decoded again.
  virtual void NoteFullPassCost(double seconds) = 0;

  // The slot session's connection, for the lane's StatementWatchdog armed
  // around Drain(); null while not connected (Drain() may connect: its own
  // statements are bounded by [changes] statement_timeout regardless).
  virtual std::shared_ptr<pqxx::connection> shared_connection() const = 0;

  // SIGTERM: cancels the statement in flight (if any) so that shutdown is not
  // held up by a drain or a slot creation; later Drain() calls return at once
  // with feed_up = false.
  virtual void Abort() = 0;

  // Why the slot of the current generation was created (kStartup for the
  // first): a check that sees a new generation can count its full pass under
  // drain_cost or unmappable rather than a plain resync.
  virtual ResyncReason generation_reason() const = 0;

  // Why incremental mode is off ("wal_level is replica, not logical"), empty
  // while it is on or not yet known: for the log and /api.
  virtual std::string off_reason() const = 0;
};

// The feed for every incremental entry of `config` (the union of their
// `tables`), on [changes] dsn (else [database] dsn). Connects lazily: the
// first Drain() connects, inspects the publication and creates the slot.
std::unique_ptr<ChangeSource> MakeChangeFeed(const config::Config& config);

}  // namespace seatwatch::changes
