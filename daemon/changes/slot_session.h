#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <pqxx/connection>
#include <pqxx/result>

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
};

// One row of pg_logical_slot_get_binary_changes: a pgoutput message and the
// 32-bit xid of the transaction it belongs to.
struct SlotMessage {
  std::uint32_t xid = 0;
  std::string data;
};

// Where the slot stands: gone (dropped, or invalidated by
// max_slot_wal_keep_size) or how much WAL it holds back.
struct SlotPosition {
  bool lost = false;
  std::string wal_status;   // reserved, extended, unreserved, lost; empty if gone
  std::int64_t lag_bytes = 0;  // pg_current_wal_lsn() - confirmed_flush_lsn
  // confirmed_flush_lsn as bytes from 0/0: where the drains have read to.
  std::uint64_t confirmed_flush_lsn = 0;
  // The sessions holding an xid (SessionSightings::kSightingsColumn), read
  // in the same statement: a session in a transaction is named only while
  // it runs.
  std::string sightings;
};

// The dedicated connection that owns the temporary slot. ANY error on the
// session that owns a temporary slot drops the slot (the server's error path
// cleans up temporary slots), so this session runs nothing but the slot's
// own statements, each bounded by statement_timeout; the caller treats any
// exception as "the slot is gone" and disconnects.
//
// Thread-safety: everything from one owner thread, but Cancel() and
// shared_connection() from any thread.
class SlotSession {
 public:
  explicit SlotSession(SlotSessionOptions options);
  ~SlotSession();

  // The live connection (connecting if needed; throws pqxx::broken_connection
  // while the reconnect backoff runs). A reconnect means a new backend: the
  // slot of the old one is gone, see has_slot().
  pqxx::connection& Connection();

  // Creates the temporary slot "<prefix>_<pid>_<n>". The server waits for
  // every writing transaction of the cluster that is running; the wait is
  // bounded by create_timeout (statement_timeout and lock_timeout of that
  // statement alone). Then returns the xids of this database's transactions
  // still running right after (kCreationXidsSql), 64-bit.
  std::vector<std::uint64_t> CreateSlot();
  static const char* const kCreationXidsSql;

  // The messages committed since the last drain, consumed from the slot.
  // max_changes bounds the messages (Begin, Relation and Commit count too):
  // the server stops at the end of the transaction that reached it, never
  // inside one, so one large transaction comes whole.
  std::vector<SlotMessage> Drain();

  // The slot's lag and wal_status from pg_replication_slots.
  SlotPosition Position();

  // Drops the connection (and with it the slot).
  void Disconnect();

  // True while the slot created on this backend still may exist: false after
  // Disconnect() or once the connection is found closed or replaced.
  bool has_slot();
  const std::string& slot_name() const { return slot_name_; }
  int backend_pid() const { return session_.backend_pid(); }
  db::Session::Clock::time_point next_attempt() const { return session_.next_attempt(); }

  // SIGTERM: cancels and drops the statement in flight, and any after (the
  // session's watchdog: a cancel request from a thread of its own, then the
  // socket shut down after a short grace, so it returns within 2 s even
  // through a stalled path).
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

  SlotSessionOptions options_;
  db::Session session_;
  std::string slot_name_;
  int slot_backend_pid_ = 0;
  int attempts_ = 0;
  mutable std::mutex mutex_;
  std::shared_ptr<pqxx::connection> tracked_;  // under mutex_, for shared_connection()
  db::StatementWatchdog watchdog_{"changes"};
};

}  // namespace seatwatch::changes
