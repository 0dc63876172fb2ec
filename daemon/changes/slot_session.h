#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <pqxx/connection>
#include <pqxx/result>

#include "changes/replication_stream.h"
#include "db/session.h"
#include "db/statement_watchdog.h"

namespace seatwatch::changes {

struct SlotSessionOptions {
  std::string dsn;
  std::string application_name;  // "<app>-changes"
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds statement_timeout{5000};
  std::chrono::milliseconds lock_timeout{100};
  std::chrono::milliseconds create_timeout{5000};
  std::chrono::milliseconds reconnect_max_backoff{10000};
  std::string slot_prefix = "seatwatch";
  std::string publication = "seatwatch";
  int max_changes = 100000;
  // The walsender's wal_sender_timeout (ReplicationStream): a frozen or
  // cut-off daemon's slot is gone this long after its last word.
  std::chrono::milliseconds sender_timeout{10000};
};

// The walsender's timeout for a feed whose statements are bounded by
// `statement_timeout`: twice that, and never below 5 s, five status
// updates' worth.
std::chrono::milliseconds SenderTimeoutFor(std::chrono::milliseconds statement_timeout);

// One pgoutput message of the slot's stream.
struct SlotMessage {
  std::string data;
};

// Where the slot stands: gone (dropped, or invalidated by
// max_slot_wal_keep_size) or how much WAL it holds back.
struct SlotPosition {
  bool lost = false;
  std::string wal_status;   // reserved, extended, unreserved, lost; empty if gone
  std::int64_t lag_bytes = 0;  // pg_current_wal_lsn() - confirmed_flush_lsn
  // confirmed_flush_lsn as bytes from 0/0: what the feed has confirmed.
  std::uint64_t confirmed_flush_lsn = 0;
  // pg_current_wal_flush_lsn() as bytes from 0/0: every commit visible now
  // ends at or before it.
  std::uint64_t flush_lsn = 0;
  // The sessions holding an xid (SessionSightings::kSightingsColumn), read
  // in the same statement: a session in a transaction is named only while
  // it runs.
  std::string sightings;
};

// The feed's two connections: the replication stream that owns the
// temporary slot (ReplicationStream, a walsender decoding each WAL record
// once) and a plain session for the feed's statements (the slot's position,
// the publication's coverage, ending given-up slots), each bounded by
// statement_timeout. The caller treats any exception as "the slot is gone"
// and disconnects both.
//
// Thread-safety: everything from one owner thread, but Cancel() and
// shared_connection() from any thread.
class SlotSession {
 public:
  explicit SlotSession(SlotSessionOptions options);
  ~SlotSession();

  // The plain session (connecting if needed; throws pqxx::broken_connection
  // while the reconnect backoff runs).
  pqxx::connection& Connection();

  // Creates the temporary slot "<prefix>_<pid>_<n>" on a new replication
  // connection and starts streaming from it. The server waits for every
  // writing transaction of the cluster that is running; the wait is bounded
  // by create_timeout (then cancelled). Then returns the xids of this
  // database's transactions still running right after (kCreationXidsSql),
  // 64-bit, read on the plain session.
  std::vector<std::uint64_t> CreateSlot();
  static const char* const kCreationXidsSql;

  // Confirms what the last drain handed over (the caller's state includes
  // it now), waits at most kCatchUpWait for the stream to reach
  // `wait_for_lsn` (a flush position read just before: a commit visible
  // then comes in this drain), and returns the messages received since the
  // last drain. max_changes bounds the messages (Begin, Relation and Commit
  // count too): a drain ends at the end of the transaction that reached it,
  // never inside one, so one large transaction comes whole.
  std::vector<SlotMessage> Drain(std::uint64_t wait_for_lsn);
  static constexpr std::chrono::milliseconds kCatchUpWait{1000};
  // Every transaction whose commit ends at or before this has been handed
  // over by a drain of this slot (0: not known yet).
  std::uint64_t complete_through() const { return complete_through_; }
  // How long the last drain waited for the stream: idle time, not the
  // database's (a flush position inside a record the WAL writer has not
  // finished flushing is reached only at its next flush).
  double waited_seconds() const { return waited_seconds_; }

  // The slot's lag and wal_status from pg_replication_slots, as the named
  // statement "seatwatch_slot_position" (see db::PrepareOn).
  SlotPosition Position();

  // Drops both connections (and with the stream the slot).
  void Disconnect();

  // True while the stream that owns the slot is open and has not failed.
  bool has_slot();
  const std::string& slot_name() const { return slot_name_; }
  // The walsender that holds the slot (0 before the first).
  int backend_pid() const { return slot_backend_pid_; }
  // The plain session's backend.
  int sql_backend_pid() const { return session_.backend_pid(); }
  db::Session::Clock::time_point next_attempt() const { return session_.next_attempt(); }

  // SIGTERM: cancels and drops the statement in flight, and any after (the
  // session's watchdog: a cancel request from a thread of its own, then the
  // socket shut down after a short grace, so it returns within 2 s even
  // through a stalled path), and the stream.
  void Cancel();

  // Arms the session's own watchdog around a statement that the server
  // should end within `bound`: a path that stops answering (a stalled
  // proxy) would otherwise hold the slot session past every server-side
  // timeout. Its own, since the drain may connect anew on a connection the
  // caller's lane watchdog was never armed with.
  class Watch {
   public:
    Watch(SlotSession& session, std::chrono::milliseconds bound);
    ~Watch();
    Watch(const Watch&) = delete;
    Watch& operator=(const Watch&) = delete;

   private:
    SlotSession& session_;
  };
  std::shared_ptr<pqxx::connection> shared_connection() const;

 private:
  void Track();
  // One statement in a nontransaction of its own on Connection(), under a
  // Watch of statement_timeout.
  template <typename... Params>
  pqxx::result ExecWatched(const char* sql, const Params&... params);
  // The same for a statement run every drain: prepared as `name` on the
  // session (once per connection), so the server plans it once, not each
  // time.
  template <typename... Params>
  pqxx::result ExecPreparedWatched(const char* name, const std::string& sql,
                                   const Params&... params);

  SlotSessionOptions options_;
  db::Session session_;
  std::string slot_name_;
  int slot_backend_pid_ = 0;
  std::unique_ptr<ReplicationStream> stream_;  // replaced under mutex_ (Cancel reads it)
  bool cancelled_ = false;                     // under mutex_
  std::uint64_t complete_through_ = 0;  // handed over; confirmed at the next drain
  double waited_seconds_ = 0;
  int attempts_ = 0;
  mutable std::mutex mutex_;
  std::shared_ptr<pqxx::connection> tracked_;  // under mutex_, for shared_connection()
  db::StatementWatchdog watchdog_{"changes"};
};

}  // namespace seatwatch::changes
