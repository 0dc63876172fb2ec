#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <pqxx/connection>

#include "db/session.h"

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
  // statement alone). Then returns the xids in progress right after (the
  // xip of a snapshot taken then, 64-bit).
  std::vector<std::uint64_t> CreateSlot();

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

  // Sends a cancel request for the statement in flight, from a thread of its
  // own (through a stalled path PQcancel may never return).
  void Cancel();
  std::shared_ptr<pqxx::connection> shared_connection() const;

 private:
  void Track();

  SlotSessionOptions options_;
  db::Session session_;
  std::string slot_name_;
  int slot_backend_pid_ = 0;
  int attempts_ = 0;
  mutable std::mutex mutex_;
  std::shared_ptr<pqxx::connection> tracked_;  // under mutex_, for Cancel()
};

}  // namespace seatwatch::changes
