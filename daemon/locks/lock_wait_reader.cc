#include "locks/lock_wait_reader.h"

#include <pqxx/result>

#include "db/array_literal.h"

namespace seatwatch::locks {

namespace {

// The one read of a lock poll. pg_stat_activity is read once, into `a`; only
// its datid and usesysid are used, so the planner drops the view's joins to
// pg_database and pg_authid, and user names are looked up for the returned
// sessions only. The idle majority is counted here, not returned.
//
// `w` is gated by EXISTS (SELECT FROM waiting): it has no reference to pg_locks,
// so the planner makes it a one-time filter and neither pg_locks nor
// pg_blocking_pids() runs when nobody waits. Within `w` the filter on pid and
// granted is applied by the scan of pg_locks before the select list, so
// pg_blocking_pids() runs for the waiters only.
//
// clock_timestamp(), not now(): the transaction may have waited for its first
// statement, and wait ages must not come out negative. date_part(), not
// extract(): it returns float8 on every version (extract is numeric on 14+).
constexpr const char* kLockPollSql = R"(
WITH a AS MATERIALIZED (
  SELECT pid, backend_type, datid, state, wait_event_type, wait_event, application_name,
         usesysid, client_addr, xact_start, state_change, query
  FROM pg_stat_activity
  WHERE pid <> pg_backend_pid()
),
db AS MATERIALIZED (
  SELECT oid FROM pg_database WHERE datname = current_database()
),
waiting AS MATERIALIZED (
  SELECT a.pid FROM a, db
  WHERE a.backend_type = 'client backend' AND a.datid = db.oid AND a.wait_event_type = 'Lock'
),
w AS MATERIALIZED (
  SELECT l.pid, l.locktype, l.mode,
         CASE WHEN l.database = db.oid THEN l.relation::int8 END AS relation,
         CASE WHEN l.database = db.oid THEN l.relation::regclass::text END AS relation_name,
         l.page, l.tuple,
         format('%s|%s|%s|%s|%s|%s|%s|%s|%s|%s', l.locktype, l.database, l.relation, l.page,
                l.tuple, l.virtualxid, l.transactionid, l.classid, l.objid, l.objsubid) AS target,
         @WAITSTART@,
         pg_blocking_pids(l.pid) AS blockers
  FROM pg_locks AS l, db
  WHERE EXISTS (SELECT FROM waiting) AND NOT l.granted AND l.pid IN (SELECT pid FROM waiting)
)
SELECT 'session' AS kind, a.pid, coalesce(a.backend_type, '') AS backend_type,
       coalesce(a.datid = db.oid, false) AS in_database, a.state,
       coalesce(a.wait_event_type, '') AS wait_event_type, coalesce(a.wait_event, '') AS wait_event,
       coalesce(a.application_name, '') AS application_name,
       coalesce(pg_get_userbyid(a.usesysid)::text, '') AS usename,
       host(a.client_addr) AS client_addr,
       date_part('epoch', clock_timestamp() - a.xact_start) AS xact_age_seconds,
       date_part('epoch', clock_timestamp() - a.state_change) AS state_age_seconds,
       (date_part('epoch', a.state_change) * 1000000)::int8 AS state_change_us,
       CASE WHEN $1::int < 0 THEN NULL
            WHEN $1::int > 0 THEN left(a.query, $1::int)
            ELSE a.query END AS query,
       w.locktype, w.mode, w.relation, w.relation_name, w.page, w.tuple, w.target,
       w.wait_seconds, w.wait_start_us, w.blockers::text AS blockers,
       NULL::int8 AS sessions, NULL::float8 AS deadlocks, NULL::float8 AS xact_rollback
FROM a CROSS JOIN db LEFT JOIN w ON w.pid = a.pid
WHERE a.pid IN (SELECT pid FROM w UNION ALL SELECT unnest(blockers) FROM w)
UNION ALL
SELECT 'state', NULL, NULL, NULL, a.state, NULL, NULL, NULL, NULL, NULL,
       max(date_part('epoch', clock_timestamp() - a.xact_start)), NULL, NULL, NULL,
       NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       count(*), NULL, NULL
FROM a, db
WHERE a.backend_type = 'client backend' AND a.datid = db.oid
GROUP BY a.state
UNION ALL
SELECT 'database', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       NULL, deadlocks::float8, xact_rollback::float8
FROM pg_stat_database
WHERE datname = current_database()
)";

// The columns of kLockPollSql, in order.
enum Column {
  kKind, kPid, kBackendType, kInDatabase, kState, kWaitEventType, kWaitEvent,
  kApplicationName, kUsename, kClientAddr, kXactAge, kStateAge, kStateChangeUs, kQuery,
  kLocktype, kMode, kRelation, kRelationName, kPage, kTuple, kTarget, kWaitSeconds,
  kWaitStartUs, kBlockers, kSessions, kDeadlocks, kXactRollback,
};

constexpr const char* kWaitStartColumns =
    "greatest(date_part('epoch', clock_timestamp() - l.waitstart), 0) AS wait_seconds, "
    "(date_part('epoch', l.waitstart) * 1000000)::int8 AS wait_start_us";
constexpr const char* kNoWaitStartColumns =
    "NULL::float8 AS wait_seconds, NULL::int8 AS wait_start_us";

constexpr const char* kTablesSql = R"(
SELECT c.oid::int8, c.oid::regclass::text
FROM unnest($1::text[]) AS t(name)
JOIN pg_class AS c ON c.oid = to_regclass(t.name)
)";

constexpr const char* kPrimaryKeySql = R"(
SELECT a.attname::text, quote_ident(a.attname)
FROM pg_index AS i
CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, n)
JOIN pg_attribute AS a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
WHERE i.indrelid = $1::int8::oid AND i.indisprimary
ORDER BY k.n
)";

template <typename T>
std::optional<T> Optional(const pqxx::field& field) {
  if (field.is_null()) return std::nullopt;
  return field.as<T>();
}

std::string Text(const pqxx::field& field) { return field.is_null() ? "" : field.c_str(); }

// How much of each query text the server sends ($1): -1 none, 0 all. Raw
// text is cut there to the limit; text to normalize gets more, since its
// literals shrink to $n, but a bound all the same: track_activity_query_size
// may be up to 1 MB per session. The prefix the server cuts is lexed like the
// prefix pg_stat_activity keeps: whatever it cuts open is hidden.
constexpr int kNormalizeReadFactor = 8;

int ServerCut(QueryTextMode show_query, int query_max_length) {
  if (show_query == QueryTextMode::kNone) return -1;
  if (show_query == QueryTextMode::kRaw || query_max_length <= 0) return query_max_length;
  long long cut = static_cast<long long>(query_max_length) * kNormalizeReadFactor;
  return cut > (1 << 20) ? (1 << 20) : static_cast<int>(cut);
}

}  // namespace

std::vector<int> ParseIntArray(const std::string& text) {
  std::vector<int> values;
  std::string number;
  for (char c : text) {
    if ((c >= '0' && c <= '9') || c == '-') {
      number += c;
    } else if (!number.empty()) {
      values.push_back(std::stoi(number));
      number.clear();
    }
  }
  if (!number.empty()) values.push_back(std::stoi(number));
  return values;
}

std::string LockPollSql(bool has_waitstart) {
  std::string sql = kLockPollSql;
  sql.replace(sql.find("@WAITSTART@"), 11, has_waitstart ? kWaitStartColumns : kNoWaitStartColumns);
  return sql;
}

LockPollRows ReadLockPoll(pqxx::transaction_base& tx, bool has_waitstart,
                          QueryTextMode show_query, int query_max_length) {
  // Unnamed, so planned on every poll (a fraction of a millisecond): a named
  // prepared statement belongs to one server connection, and behind a
  // transaction pooler the next poll runs on another one.
  pqxx::result result =
      tx.exec_params(LockPollSql(has_waitstart), ServerCut(show_query, query_max_length));
  LockPollRows rows;
  for (const auto& r : result) {
    std::string kind = Text(r[kKind]);
    if (kind == "state") {
      rows.states.push_back({Optional<std::string>(r[kState]), r[kSessions].as<int>(),
                             Optional<double>(r[kXactAge])});
      continue;
    }
    if (kind == "database") {
      rows.counters.deadlocks = Optional<double>(r[kDeadlocks]).value_or(0);
      rows.counters.xact_rollback = Optional<double>(r[kXactRollback]).value_or(0);
      continue;
    }
    SessionRow session;
    session.pid = r[kPid].as<int>();
    session.backend_type = Text(r[kBackendType]);
    session.client = session.backend_type == "client backend";
    session.in_database = r[kInDatabase].as<bool>();
    session.state = Optional<std::string>(r[kState]);
    session.wait_event_type = Text(r[kWaitEventType]);
    session.wait_event = Text(r[kWaitEvent]);
    session.application_name = Text(r[kApplicationName]);
    session.usename = Text(r[kUsename]);
    session.client_addr = Optional<std::string>(r[kClientAddr]);
    session.xact_age_seconds = Optional<double>(r[kXactAge]);
    session.state_age_seconds = Optional<double>(r[kStateAge]);
    session.state_change_us = Optional<std::int64_t>(r[kStateChangeUs]);
    // The only place query text enters seatwatch: every output shows it as
    // [locks] show_query says, never more.
    session.query = ShownQueryText(show_query, Optional<std::string>(r[kQuery]), query_max_length);
    rows.sessions.push_back(std::move(session));
    if (r[kLocktype].is_null()) continue;  // a blocker that does not wait
    LockWaitRow wait;
    wait.pid = r[kPid].as<int>();
    wait.locktype = Text(r[kLocktype]);
    wait.mode = Text(r[kMode]);
    if (auto oid = Optional<std::int64_t>(r[kRelation])) wait.relation = static_cast<std::uint32_t>(*oid);
    wait.relation_name = Text(r[kRelationName]);
    wait.page = Optional<std::int64_t>(r[kPage]);
    wait.tuple = Optional<std::int64_t>(r[kTuple]);
    wait.target = Text(r[kTarget]);
    wait.wait_seconds = Optional<double>(r[kWaitSeconds]);
    wait.wait_start_us = Optional<std::int64_t>(r[kWaitStartUs]);
    wait.blockers = ParseIntArray(Text(r[kBlockers]));
    rows.waits.push_back(std::move(wait));
  }
  return rows;
}

std::vector<TableRow> ResolveTables(pqxx::transaction_base& tx,
                                    const std::vector<std::string>& names) {
  pqxx::result result = tx.exec_params(kTablesSql, db::TextArrayLiteral(names));
  std::vector<TableRow> tables;
  for (const auto& r : result) {
    tables.push_back({static_cast<std::uint32_t>(r[0].as<std::int64_t>()), Text(r[1])});
  }
  return tables;
}

std::vector<KeyColumn> ReadPrimaryKey(pqxx::transaction_base& tx, std::uint32_t relation) {
  pqxx::result result = tx.exec_params(kPrimaryKeySql, static_cast<std::int64_t>(relation));
  std::vector<KeyColumn> key;
  for (const auto& r : result) key.push_back({Text(r[0]), Text(r[1])});
  return key;
}

std::optional<std::vector<std::optional<std::string>>> ReadRowKey(
    pqxx::transaction_base& tx, const TableRow& table, const std::vector<KeyColumn>& key,
    std::int64_t page, std::int64_t tuple) {
  std::string columns;
  for (const auto& column : key) {
    if (!columns.empty()) columns += ", ";
    columns += column.quoted + "::text";
  }
  // table.name comes from regclass output and the columns from quote_ident:
  // both are already quoted for SQL. ONLY: a ctid is meaningful in one heap.
  std::string sql = "SELECT " + columns + " FROM ONLY " + table.name + " WHERE ctid = $1::tid";
  pqxx::result result = tx.exec_params(
      sql, "(" + std::to_string(page) + "," + std::to_string(tuple) + ")");
  if (result.empty()) return std::nullopt;
  std::vector<std::optional<std::string>> values;
  for (const auto& field : result[0]) values.push_back(Optional<std::string>(field));
  return values;
}

}  // namespace seatwatch::locks
