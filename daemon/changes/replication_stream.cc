#include "changes/replication_stream.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <libpq-fe.h>

#include "util/thread_name.h"

namespace seatwatch::changes {

namespace {

std::uint64_t ReadBigEndian64(const char* data) {
  std::uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value = (value << 8) | static_cast<unsigned char>(data[i]);
  return value;
}

void WriteBigEndian64(char* out, std::uint64_t value) {
  for (int i = 7; i >= 0; --i) {
    out[i] = static_cast<char>(value & 0xff);
    value >>= 8;
  }
}

// The protocol counts time in microseconds from 2000-01-01 UTC.
std::int64_t PostgresEpochMicros() {
  constexpr std::int64_t kUnixTo2000Seconds = 946684800;
  auto since_unix = std::chrono::duration_cast<std::chrono::microseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
  return since_unix - kUnixTo2000Seconds * 1000000;
}

std::string Trimmed(const char* text) {
  std::string out = text ? text : "";
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

// publication_names takes a list of identifiers inside a string literal.
std::string PublicationOption(const std::string& publication) {
  std::string identifier = "\"";
  for (char c : publication) identifier += c == '"' ? std::string("\"\"") : std::string(1, c);
  identifier += '"';
  std::string literal = "'";
  for (char c : identifier) literal += c == '\'' ? std::string("''") : std::string(1, c);
  return literal + "'";
}

// XLogData: 'w', the WAL start and end of the data, the server's clock.
constexpr std::size_t kXLogDataHeader = 1 + 8 + 8 + 8;
// Primary keepalive: 'k', the server's WAL end, its clock, reply requested.
constexpr std::size_t kKeepaliveSize = 1 + 8 + 8 + 1;
// pgoutput Commit: 'C', flags, the commit LSN, then the transaction's end.
constexpr std::size_t kCommitEndOffset = 1 + 1 + 8;
constexpr std::chrono::milliseconds kPollSlice{100};
constexpr std::chrono::milliseconds kCancelGrace{2000};

}  // namespace

std::string LsnText(std::uint64_t lsn) {
  char text[32];
  std::snprintf(text, sizeof(text), "%X/%X", static_cast<unsigned>(lsn >> 32),
                static_cast<unsigned>(lsn & 0xffffffffu));
  return text;
}

ReplicationStream::ReplicationStream(StreamOptions options) : options_(std::move(options)) {}

ReplicationStream::~ReplicationStream() { Close(); }

void ReplicationStream::Open(const std::string& slot, const std::string& publication,
                             std::chrono::milliseconds timeout) {
  std::string conninfo = options_.conninfo + " replication=database";
  PGconn* conn = PQconnectdb(conninfo.c_str());
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string why = Trimmed(PQerrorMessage(conn));
    PQfinish(conn);
    throw ReplicationStreamError("cannot open the replication connection: " + why);
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    conn_ = conn;
  }
  backend_pid_ = PQbackendPID(conn_);
  try {
    auto millis = [](std::chrono::milliseconds value) {
      return "'" + std::to_string(value.count()) + "ms'";
    };
    // The creation waits for the cluster's writing transactions: the
    // server ends that wait at `timeout` (a lock wait, then the statement),
    // the client a grace later through a path that stopped answering.
    Exec("SET wal_sender_timeout = " + millis(options_.sender_timeout), PGRES_COMMAND_OK, timeout);
    Exec("SET lock_timeout = " + millis(timeout), PGRES_COMMAND_OK, timeout);
    Exec("SET statement_timeout = " + millis(timeout), PGRES_COMMAND_OK, timeout);
    Exec("CREATE_REPLICATION_SLOT \"" + slot + "\" TEMPORARY LOGICAL pgoutput (SNAPSHOT 'nothing')",
         PGRES_TUPLES_OK, timeout + kCancelGrace);
    Exec("START_REPLICATION SLOT \"" + slot +
             "\" LOGICAL 0/0 (proto_version '1', publication_names " +
             PublicationOption(publication) + ")",
         PGRES_COPY_BOTH, timeout);
  } catch (...) {
    Close();
    throw;
  }
  PQsetnonblocking(conn_, 1);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stop_) {
      // Cancelled while the last command finished.
      failed_ = "cancelled";
    }
  }
  last_received_ = last_status_ = Clock::now();
  reader_ = std::thread([this] { Run(); });
}

void ReplicationStream::Exec(const std::string& sql, int expected_status,
                             std::chrono::milliseconds timeout) {
  if (!PQsendQuery(conn_, sql.c_str())) {
    throw ReplicationStreamError(Trimmed(PQerrorMessage(conn_)));
  }
  auto deadline = Clock::now() + timeout;
  bool cancelled = false;
  std::string error;
  int status = -1;
  for (;;) {
    if (!PQconsumeInput(conn_)) throw ReplicationStreamError(Trimmed(PQerrorMessage(conn_)));
    while (!PQisBusy(conn_)) {
      PGresult* result = PQgetResult(conn_);
      if (result == nullptr) {
        if (!error.empty()) throw ReplicationStreamError(error);
        if (status != expected_status) {
          throw ReplicationStreamError(std::string("unexpected answer to ") +
                                       sql.substr(0, sql.find(' ')));
        }
        return;
      }
      status = PQresultStatus(result);
      if (status == PGRES_FATAL_ERROR) error = Trimmed(PQresultErrorMessage(result));
      PQclear(result);
      // COPY BOTH has no end of results: the stream runs from here.
      if (status == PGRES_COPY_BOTH && expected_status == PGRES_COPY_BOTH) return;
    }
    auto now = Clock::now();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stop_ && !cancelled) deadline = now;
    }
    if (now >= deadline) {
      if (cancelled) {
        throw ReplicationStreamError(sql.substr(0, sql.find(' ')) + " gave no answer after " +
                                     std::to_string(timeout.count()) + " ms and a cancel");
      }
      // The server ends the command on a cancel; the answer says so.
      PGcancel* cancel = PQgetCancel(conn_);
      char buffer[256];
      if (cancel) {
        PQcancel(cancel, buffer, sizeof(buffer));
        PQfreeCancel(cancel);
      }
      cancelled = true;
      deadline = now + kCancelGrace;
      if (error.empty()) {
        error = sql.substr(0, sql.find(' ')) + " took longer than " +
                std::to_string(timeout.count()) + " ms and was cancelled";
      }
    }
    pollfd pfd{PQsocket(conn_), POLLIN, 0};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    poll(&pfd, 1, static_cast<int>(std::clamp<long long>(left.count(), 1, kPollSlice.count())));
  }
}

void ReplicationStream::Run() {
  thread_name::Set("sw-stream");
  int fd = PQsocket(conn_);
  bool writing = false;
  bool was_reading = true;
  for (;;) {
    bool reading;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stop_ || !failed_.empty()) return;
      reading = buffered_bytes_ < options_.max_buffered_bytes;
    }
    short events = static_cast<short>((reading ? POLLIN : 0) | (writing ? POLLOUT : 0));
    pollfd pfd{fd, events, 0};
    if (poll(&pfd, 1, static_cast<int>(kPollSlice.count())) < 0 && errno != EINTR) {
      Fail(std::string("poll: ") + std::strerror(errno));
      return;
    }
    auto now = Clock::now();
    if (reading && !was_reading) last_received_ = now;  // the wait was ours
    was_reading = reading;
    if (reading && (pfd.revents & (POLLIN | POLLHUP | POLLERR))) {
      if (!PQconsumeInput(conn_)) {
        Fail(Trimmed(PQerrorMessage(conn_)));
        return;
      }
      if (!ReadAvailable(now)) return;
    }
    bool confirm_news;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      confirm_news = confirmed_ > 0 && confirmed_ != sent_confirmed_;
    }
    if (reply_requested_ || confirm_news || now - last_status_ >= options_.status_interval) {
      SendStatus(now, now - last_status_ >= options_.status_interval);
      reply_requested_ = false;
    }
    int flushed = PQflush(conn_);
    if (flushed < 0) {
      Fail(Trimmed(PQerrorMessage(conn_)));
      return;
    }
    writing = flushed == 1;
    if (reading && now - last_received_ > options_.stall_timeout) {
      Fail("the walsender sent nothing for " +
           std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                              now - last_received_)
                              .count()) +
           " ms though asked to answer: the path stalled");
      return;
    }
  }
}

bool ReplicationStream::ReadAvailable(Clock::time_point now) {
  for (;;) {
    char* buffer = nullptr;
    int length = PQgetCopyData(conn_, &buffer, 1);
    if (length == 0) return true;
    if (length == -1) {
      PGresult* result = PQgetResult(conn_);
      std::string why = result ? Trimmed(PQresultErrorMessage(result)) : "";
      if (result) PQclear(result);
      Fail("the server ended the stream" + (why.empty() ? std::string() : ": " + why));
      return false;
    }
    if (length < 0) {
      Fail(Trimmed(PQerrorMessage(conn_)));
      return false;
    }
    last_received_ = now;
    std::size_t size = static_cast<std::size_t>(length);
    Entry entry;
    bool queue = false;
    if (buffer[0] == 'w' && size > kXLogDataHeader) {
      entry.message.assign(buffer + kXLogDataHeader, size - kXLogDataHeader);
      char kind = entry.message[0];
      if (kind == 'B') in_transaction_ = true;
      if (kind == 'C' && entry.message.size() >= kCommitEndOffset + 8) {
        in_transaction_ = false;
        entry.transaction_end = true;
        entry.through = ReadBigEndian64(entry.message.data() + kCommitEndOffset);
        received_through_ = std::max(received_through_, entry.through);
      }
      queue = true;
    } else if (buffer[0] == 'k' && size >= kKeepaliveSize) {
      // The walsender has sent everything it decoded before its WAL end:
      // a transaction that commits later ends later.
      std::uint64_t wal_end = ReadBigEndian64(buffer + 1);
      if (buffer[17]) reply_requested_ = true;
      if (!in_transaction_ && wal_end > received_through_) {
        received_through_ = wal_end;
        entry.through = wal_end;
        queue = true;
      }
    }
    PQfreemem(buffer);
    if (!queue) continue;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      buffered_bytes_ += entry.message.size() + sizeof(Entry);
      if (entry.through > queued_through_) queued_through_ = entry.through;
      entries_.push_back(std::move(entry));
    }
    arrived_.notify_all();
  }
}

void ReplicationStream::SendStatus(Clock::time_point now, bool request_reply) {
  std::uint64_t confirmed;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    confirmed = confirmed_;
    sent_confirmed_ = confirmed;
  }
  // Standby status update: written, flushed and applied, the clock, and
  // whether to answer. All three are what the caller's state includes.
  char message[1 + 8 + 8 + 8 + 8 + 1];
  message[0] = 'r';
  WriteBigEndian64(message + 1, confirmed);
  WriteBigEndian64(message + 9, confirmed);
  WriteBigEndian64(message + 17, confirmed);
  WriteBigEndian64(message + 25, static_cast<std::uint64_t>(PostgresEpochMicros()));
  message[33] = request_reply ? 1 : 0;
  if (PQputCopyData(conn_, message, sizeof(message)) < 0) {
    Fail(Trimmed(PQerrorMessage(conn_)));
    return;
  }
  last_status_ = now;
}

void ReplicationStream::Fail(const std::string& why) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failed_.empty()) failed_ = why.empty() ? "the replication stream broke" : why;
  }
  arrived_.notify_all();
}

StreamTake ReplicationStream::Take(std::size_t max_messages) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!failed_.empty()) throw ReplicationStreamError(failed_);
  if (conn_ == nullptr) throw ReplicationStreamError("the replication stream is closed");
  StreamTake take;
  while (!entries_.empty()) {
    Entry& entry = entries_.front();
    buffered_bytes_ -= entry.message.size() + sizeof(Entry);
    if (entry.through > taken_through_) taken_through_ = entry.through;
    bool end = entry.transaction_end;
    if (!entry.message.empty()) take.messages.push_back(std::move(entry.message));
    entries_.pop_front();
    if (end && take.messages.size() >= max_messages) break;
  }
  take.complete_through = taken_through_;
  return take;
}

bool ReplicationStream::WaitThrough(std::uint64_t lsn, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  return arrived_.wait_for(lock, timeout, [&] {
    return queued_through_ >= lsn || !failed_.empty() || stop_;
  }) && queued_through_ >= lsn;
}

void ReplicationStream::Confirm(std::uint64_t lsn) {
  std::lock_guard<std::mutex> lock(mutex_);
  confirmed_ = std::max(confirmed_, lsn);
}

bool ReplicationStream::alive() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return conn_ != nullptr && failed_.empty() && !stop_;
}

void ReplicationStream::Cancel() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  arrived_.notify_all();
}

void ReplicationStream::Close() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  arrived_.notify_all();
  if (reader_.joinable()) reader_.join();
  PGconn* conn;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    conn = conn_;
    conn_ = nullptr;
    entries_.clear();
    buffered_bytes_ = 0;
  }
  if (conn) PQfinish(conn);
}

}  // namespace seatwatch::changes
