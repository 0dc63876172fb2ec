#include "locks/lock_wait_reader.h"

#include <pqxx/result>

namespace seatwatch::locks {

namespace {

// clock_timestamp(), not now(): the transaction may have waited for its
// first statement, and wait ages must not come out negative.
constexpr const char* kSessionsSql = R"(
SELECT a.pid,
       coalesce(a.backend_type, '') AS backend_type,
       coalesce(a.datname = current_database(), false) AS in_database,
       a.state,
       coalesce(a.wait_event_type, '') AS wait_event_type,
       coalesce(a.wait_event, '') AS wait_event,
       coalesce(a.application_name, '') AS application_name,
       coalesce(a.usename::text, '') AS usename,
       host(a.client_addr) AS client_addr,
       extract(epoch FROM clock_timestamp() - a.xact_start)::float8 AS xact_age_seconds,
       extract(epoch FROM clock_timestamp() - a.state_change)::float8 AS state_age_seconds,
       (extract(epoch FROM a.state_change) * 1000000)::int8 AS state_change_us
FROM pg_stat_activity AS a
WHERE a.pid <> pg_backend_pid()
)";

// The same transaction sees the same pg_stat_activity snapshot as the
// session read, so the texts belong to the sessions the forest was built on.
constexpr const char* kQueriesSql = R"(
SELECT a.pid, CASE WHEN $2::int > 0 THEN left(a.query, $2::int) ELSE a.query END
FROM pg_stat_activity AS a
WHERE a.pid = ANY ($1::int[])
)";

// The filter on pid and granted is applied by the scan of pg_locks before the
// select list, so pg_blocking_pids() runs for the given waiters only.
constexpr const char* kLockWaitsSql = R"(
SELECT l.pid,
       l.locktype,
       l.mode,
       CASE WHEN l.database = d.oid THEN l.relation::int8 END AS relation,
       CASE WHEN l.database = d.oid THEN l.relation::regclass::text END AS relation_name,
       l.page,
       l.tuple,
       format('%s|%s|%s|%s|%s|%s|%s|%s|%s|%s', l.locktype, l.database, l.relation, l.page,
              l.tuple, l.virtualxid, l.transactionid, l.classid, l.objid, l.objsubid) AS target,
       @WAITSTART@,
       pg_blocking_pids(l.pid)::text AS blockers
FROM pg_locks AS l
CROSS JOIN (SELECT oid FROM pg_database WHERE datname = current_database()) AS d
WHERE NOT l.granted AND l.pid = ANY ($1::int[])
)";

constexpr const char* kWaitStartColumns =
    "greatest(extract(epoch FROM clock_timestamp() - l.waitstart), 0)::float8 AS wait_seconds, "
    "(extract(epoch FROM l.waitstart) * 1000000)::int8 AS wait_start_us";
constexpr const char* kNoWaitStartColumns =
    "NULL::float8 AS wait_seconds, NULL::int8 AS wait_start_us";

constexpr const char* kCountersSql = R"(
SELECT deadlocks::float8, xact_rollback::float8
FROM pg_stat_database
WHERE datname = current_database()
)";

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

std::string TextArrayLiteral(const std::vector<std::string>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ",";
    out += "\"";
    for (char c : values[i]) {
      if (c == '"' || c == '\\') out += "\\";
      out += c;
    }
    out += "\"";
  }
  return out + "}";
}

}  // namespace

std::string IntArrayLiteral(const std::vector<int>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ",";
    out += std::to_string(values[i]);
  }
  return out + "}";
}

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

std::vector<SessionRow> ReadSessions(pqxx::transaction_base& tx) {
  pqxx::result result = tx.exec(kSessionsSql);
  std::vector<SessionRow> rows;
  rows.reserve(result.size());
  for (const auto& r : result) {
    SessionRow row;
    row.pid = r[0].as<int>();
    row.backend_type = Text(r[1]);
    row.client = row.backend_type == "client backend";
    row.in_database = r[2].as<bool>();
    row.state = Optional<std::string>(r[3]);
    row.wait_event_type = Text(r[4]);
    row.wait_event = Text(r[5]);
    row.application_name = Text(r[6]);
    row.usename = Text(r[7]);
    row.client_addr = Optional<std::string>(r[8]);
    row.xact_age_seconds = Optional<double>(r[9]);
    row.state_age_seconds = Optional<double>(r[10]);
    row.state_change_us = Optional<std::int64_t>(r[11]);
    rows.push_back(std::move(row));
  }
  return rows;
}

std::map<int, std::string> ReadQueries(pqxx::transaction_base& tx, const std::vector<int>& pids,
                                       int max_length) {
  pqxx::result result = tx.exec_params(kQueriesSql, IntArrayLiteral(pids), max_length);
  std::map<int, std::string> queries;
  for (const auto& r : result) {
    if (!r[1].is_null()) queries[r[0].as<int>()] = r[1].c_str();
  }
  return queries;
}

std::vector<LockWaitRow> ReadLockWaits(pqxx::transaction_base& tx, const std::vector<int>& pids,
                                       bool has_waitstart) {
  std::string sql = kLockWaitsSql;
  sql.replace(sql.find("@WAITSTART@"), 11, has_waitstart ? kWaitStartColumns : kNoWaitStartColumns);
  pqxx::result result = tx.exec_params(sql, IntArrayLiteral(pids));
  std::vector<LockWaitRow> rows;
  rows.reserve(result.size());
  for (const auto& r : result) {
    LockWaitRow row;
    row.pid = r[0].as<int>();
    row.locktype = Text(r[1]);
    row.mode = Text(r[2]);
    if (auto oid = Optional<std::int64_t>(r[3])) row.relation = static_cast<std::uint32_t>(*oid);
    row.relation_name = Text(r[4]);
    row.page = Optional<std::int64_t>(r[5]);
    row.tuple = Optional<std::int64_t>(r[6]);
    row.target = Text(r[7]);
    row.wait_seconds = Optional<double>(r[8]);
    row.wait_start_us = Optional<std::int64_t>(r[9]);
    row.blockers = ParseIntArray(Text(r[10]));
    rows.push_back(std::move(row));
  }
  return rows;
}

DatabaseCounters ReadDatabaseCounters(pqxx::transaction_base& tx) {
  pqxx::result result = tx.exec(kCountersSql);
  DatabaseCounters counters;
  if (result.empty()) return counters;
  counters.deadlocks = Optional<double>(result[0][0]).value_or(0);
  counters.xact_rollback = Optional<double>(result[0][1]).value_or(0);
  return counters;
}

std::vector<TableRow> ResolveTables(pqxx::transaction_base& tx,
                                    const std::vector<std::string>& names) {
  pqxx::result result = tx.exec_params(kTablesSql, TextArrayLiteral(names));
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
