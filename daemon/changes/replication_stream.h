#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

typedef struct pg_conn PGconn;

namespace seatwatch::changes {

// The stream failed or ended: its walsender, and the temporary slot with it,
// is gone or given up.
class ReplicationStreamError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct StreamOptions {
  // A key=value libpq string (db::BuildConninfo); replication=database is
  // added here.
  std::string conninfo;
  // The walsender's own wal_sender_timeout: how long it keeps the slot for a
  // client that says nothing (frozen, partitioned). Set on the session, so a
  // server default of 60 s or 0 (never) does not decide it.
  std::chrono::milliseconds sender_timeout{10000};
  // A standby status update at least this often, asking for a reply.
  std::chrono::milliseconds status_interval{1000};
  // Nothing received for this long while reading: the path stalled.
  std::chrono::milliseconds stall_timeout{7000};
  // Past this many bytes received and not taken, the socket is not read
  // (the walsender waits; status updates still go out).
  std::size_t max_buffered_bytes = std::size_t{64} << 20;
};

// What Take() hands over: pgoutput messages in order, whole transactions
// only, and the WAL position through which every transaction is in them or
// in an earlier take (0 until one is known).
struct StreamTake {
  std::vector<std::string> messages;
  std::uint64_t complete_through = 0;
};

// One logical replication connection (replication=database) that owns a
// temporary pgoutput slot and streams from it (START_REPLICATION), so each
// WAL record is decoded once by its walsender. A reader thread of its own
// takes CopyData as it arrives, answers keepalives and sends standby status
// updates that confirm only what Confirm() was given: the slot never moves
// past what the caller's state includes. A frozen or cut-off process sends
// nothing, so the walsender ends after sender_timeout and its temporary slot
// with it: the stream never keeps WAL for a client that is not there.
//
// Thread-safety: Open, Take, WaitThrough, Confirm and Close from one owner
// thread; Cancel and alive from any thread.
class ReplicationStream {
 public:
  using Clock = std::chrono::steady_clock;

  explicit ReplicationStream(StreamOptions options);
  ~ReplicationStream();
  ReplicationStream(const ReplicationStream&) = delete;
  ReplicationStream& operator=(const ReplicationStream&) = delete;

  // Connects, creates the temporary slot and starts streaming from its
  // consistent point; the slot creation (which waits for the cluster's
  // writing transactions) is bounded by `timeout`, after which it is
  // cancelled. Throws ReplicationStreamError.
  void Open(const std::string& slot, const std::string& publication,
            std::chrono::milliseconds timeout);

  // The messages received since the last take, up to the end of the first
  // transaction that reaches max_messages (a transaction is never split).
  // Throws ReplicationStreamError once the stream failed.
  StreamTake Take(std::size_t max_messages);
  // Waits until every transaction through `lsn` has been received (true),
  // at most `timeout` (false); returns at once if the stream failed.
  bool WaitThrough(std::uint64_t lsn, std::chrono::milliseconds timeout);
  // The caller's state includes every change through `lsn`: the next status
  // update confirms it, and the slot may release the WAL before it.
  void Confirm(std::uint64_t lsn);

  int backend_pid() const { return backend_pid_; }
  bool alive() const;
  // From any thread: ends a slot creation in flight and the reader.
  void Cancel();
  // Ends the connection; the walsender drops the temporary slot.
  void Close();

 private:
  struct Entry {
    std::string message;            // empty for a position-only entry
    std::uint64_t through = 0;      // complete through this once consumed (0: no news)
    bool transaction_end = false;   // the message ends a transaction
  };

  void Exec(const std::string& sql, int expected_status, std::chrono::milliseconds timeout);
  void Run();
  // Everything libpq has buffered; false once the stream failed.
  bool ReadAvailable(Clock::time_point now);
  void SendStatus(Clock::time_point now, bool request_reply);
  void Fail(const std::string& why);

  const StreamOptions options_;
  PGconn* conn_ = nullptr;
  int backend_pid_ = 0;
  std::thread reader_;

  // Reader thread only.
  bool in_transaction_ = false;
  std::uint64_t received_through_ = 0;
  Clock::time_point last_received_{};
  Clock::time_point last_status_{};
  bool reply_requested_ = false;

  mutable std::mutex mutex_;
  std::condition_variable arrived_;
  std::deque<Entry> entries_;           // under mutex_
  std::size_t buffered_bytes_ = 0;      // under mutex_
  std::uint64_t queued_through_ = 0;    // under mutex_: the newest through queued
  std::uint64_t confirmed_ = 0;         // under mutex_
  std::uint64_t sent_confirmed_ = 0;    // under mutex_: in the last status update
  std::uint64_t taken_through_ = 0;     // under mutex_: the newest through taken
  std::string failed_;                  // under mutex_: why, once failed
  bool stop_ = false;                   // under mutex_
};

// The LSN as PostgreSQL writes it ("16/B374D848").
std::string LsnText(std::uint64_t lsn);

}  // namespace seatwatch::changes
