#include "changes/slot_session.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>

#include <pqxx/except>
#include <pqxx/nontransaction>
#include <pqxx/result>
#include <pqxx/transaction>

#include "changes/session_sightings.h"
#include "db/conninfo.h"
#include "db/named_statement.h"
#include "util/log.h"

namespace seatwatch::changes {

namespace {

// Slot functions work in read-only sessions. A DSN's
// target_session_attrs=read-write, as a failover setup has it, is asked of
// libpq as primary for such a session (see db::BuildConninfo).
db::SessionSettings SettingsOf(const SlotSessionOptions& options) {
  return db::SessionSettings{options.application_name, options.connect_timeout,
                             options.statement_timeout, options.lock_timeout,
                             /*read_only=*/true};
}

// Slot names allow lower-case letters, digits and underscores only.
std::string SlotNamePart(const std::string& text) {
  std::string out;
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    out += std::isalnum(u) ? static_cast<char>(std::tolower(u)) : '_';
  }
  return out;
}

// The position, run every drain: a named statement (see db::PrepareOn).
constexpr const char* kPositionStatement = "seatwatch_slot_position";

// Past the server's own bound before the watchdog steps in: a reachable
// server ends the statement itself (and the error is the feed's signal).
constexpr std::chrono::milliseconds kWatchMargin{2000};

}  // namespace

SlotSession::SlotSession(SlotSessionOptions options)
    : options_(std::move(options)),
      session_(options_.dsn, SettingsOf(options_), options_.reconnect_max_backoff) {}

SlotSession::~SlotSession() { Disconnect(); }

std::chrono::milliseconds SenderTimeoutFor(std::chrono::milliseconds statement_timeout) {
  return std::max(statement_timeout * 2, std::chrono::milliseconds(5000));
}

pqxx::connection& SlotSession::Connection() {
  pqxx::connection& connection = session_.Connection();
  Track();
  return connection;
}

void SlotSession::Track() {
  std::lock_guard<std::mutex> lock(mutex_);
  tracked_ = session_.shared_connection();
}

// The transactions of this database that hold an xid right after the slot
// was created. A snapshot's xip is not enough: a transaction whose commit is
// flushed but that has not yet left the proc array (waiting for a
// synchronous standby) is at or above the snapshot's xmax, so it is in no
// xip list, yet the slot skipped it. Every transaction with an xid holds an
// ExclusiveLock on it until it is visible, so pg_locks lists them all
// (readable by any role). The 32-bit xid is widened to xid8 against the
// snapshot's xmax, a signed distance as in the checks' visibility query.
const char* const SlotSession::kCreationXidsSql =
    "SELECT DISTINCT (s.m + ((((l.transactionid::text::bigint - (s.m & 4294967295)) + "
    "2147483648) & 4294967295) - 2147483648))::text "
    "FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid, "
    "LATERAL (SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint AS m) s "
    "WHERE l.locktype = 'transactionid' AND l.mode = 'ExclusiveLock' AND l.granted "
    "AND a.datname = current_database()";

std::vector<std::uint64_t> SlotSession::CreateSlot() {
  Connection();
  std::string name = SlotNamePart(options_.slot_prefix) + "_" + std::to_string(getpid()) + "_" +
                     std::to_string(++attempts_);
  StreamOptions stream_options;
  stream_options.conninfo = db::BuildConninfo(options_.dsn, SettingsOf(options_));
  stream_options.sender_timeout = options_.sender_timeout;
  // A walsender decoding a large transaction answers nothing until it is
  // through, but pings at half its own timeout: silence past that timeout
  // (and a margin) is a path that stopped, not a busy server.
  stream_options.stall_timeout = options_.sender_timeout + kWatchMargin;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stream_ = std::make_unique<ReplicationStream>(stream_options);
    if (cancelled_) stream_->Cancel();
  }
  complete_through_ = 0;
  stream_->Open(name, options_.publication, options_.create_timeout);
  slot_name_ = name;
  slot_backend_pid_ = stream_->backend_pid();
  pqxx::result result = ExecWatched(kCreationXidsSql);
  std::vector<std::uint64_t> xids;
  for (const auto& row : result) xids.push_back(std::stoull(row[0].c_str()));
  return xids;
}

template <typename... Params>
pqxx::result SlotSession::ExecWatched(const char* sql, const Params&... params) {
  pqxx::connection& connection = Connection();
  Watch watch(*this, options_.statement_timeout);
  pqxx::nontransaction tx(connection, "changes_slot");
  return tx.exec_params(sql, params...);
}

template <typename... Params>
pqxx::result SlotSession::ExecPreparedWatched(const char* name, const std::string& sql,
                                              const Params&... params) {
  pqxx::connection& connection = Connection();
  db::PrepareOn(connection, name, sql);
  Watch watch(*this, options_.statement_timeout);
  pqxx::nontransaction tx(connection, "changes_slot");
  return tx.exec_prepared(name, params...);
}

std::vector<SlotMessage> SlotSession::Drain(std::uint64_t wait_for_lsn) {
  if (!stream_) throw ReplicationStreamError("no replication stream");
  stream_->Confirm(complete_through_);  // what the last drain handed over
  auto waiting = std::chrono::steady_clock::now();
  if (wait_for_lsn > complete_through_) stream_->WaitThrough(wait_for_lsn, kCatchUpWait);
  waited_seconds_ =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - waiting).count();
  StreamTake take = stream_->Take(static_cast<std::size_t>(std::max(options_.max_changes, 1)));
  std::vector<SlotMessage> messages;
  messages.reserve(take.messages.size());
  for (auto& data : take.messages) messages.push_back(SlotMessage{std::move(data)});
  complete_through_ = take.complete_through;
  return messages;
}

SlotPosition SlotSession::Position() {
  static const std::string sql =
      std::string("SELECT (pg_current_wal_lsn() - confirmed_flush_lsn)::bigint, wal_status, "
                  "(confirmed_flush_lsn - '0/0'::pg_lsn)::bigint, "
                  "(pg_current_wal_flush_lsn() - '0/0'::pg_lsn)::bigint, ") +
      SessionSightings::kSightingsColumn + " FROM pg_replication_slots WHERE slot_name = $1";
  pqxx::result result = ExecPreparedWatched(kPositionStatement, sql, slot_name_);
  SlotPosition position;
  if (result.empty()) {
    position.lost = true;
    return position;
  }
  if (!result[0][0].is_null()) position.lag_bytes = result[0][0].as<std::int64_t>();
  if (!result[0][1].is_null()) position.wal_status = result[0][1].c_str();
  if (!result[0][2].is_null()) position.confirmed_flush_lsn = result[0][2].as<std::uint64_t>();
  if (!result[0][3].is_null()) position.flush_lsn = result[0][3].as<std::uint64_t>();
  if (!result[0][4].is_null()) position.sightings = result[0][4].c_str();
  position.lost = position.wal_status == "lost";
  return position;
}

void SlotSession::Disconnect() {
  {
    // Our reference must go first: the session closes the connection only
    // when it holds the last one, and the slot goes with the connection.
    std::lock_guard<std::mutex> lock(mutex_);
    tracked_.reset();
  }
  std::unique_ptr<ReplicationStream> stream;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stream = std::move(stream_);
  }
  stream.reset();  // the walsender ends, and the temporary slot with it
  session_.Disconnect();
  slot_backend_pid_ = 0;
}

bool SlotSession::has_slot() { return stream_ && stream_->alive(); }

void SlotSession::Cancel() {
  watchdog_.Abort();
  std::lock_guard<std::mutex> lock(mutex_);
  cancelled_ = true;
  if (stream_) stream_->Cancel();
}

SlotSession::Watch::Watch(SlotSession& session, std::chrono::milliseconds bound)
    : session_(session) {
  session_.watchdog_.Arm(session_.session_.shared_connection(), bound + kWatchMargin,
                         bound + kWatchMargin);
}

SlotSession::Watch::~Watch() {
  if (session_.watchdog_.Disarm()) {
    log::Warn("change feed: the slot session gave no answer in time; connection dropped");
  }
}

std::shared_ptr<pqxx::connection> SlotSession::shared_connection() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return tracked_;
}

}  // namespace seatwatch::changes
