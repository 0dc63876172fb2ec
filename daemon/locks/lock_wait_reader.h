#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <pqxx/transaction_base>

#include "locks/lock_rows.h"

namespace seatwatch::locks {

// The SQL of the locks check, one function per statement. Each runs on the
// caller's transaction and throws whatever libpqxx throws. Stateless: callers
// serialize use of a transaction themselves.

// Every backend but our own, without query texts. Touches no lock-manager
// state.
std::vector<SessionRow> ReadSessions(pqxx::transaction_base& tx);

// The query texts of `pids`, cut to `max_length` characters (0: the whole
// text pg_stat_activity keeps). Asked only for the sessions of the forest, so
// a poll without waiters moves no query text at all.
std::map<int, std::string> ReadQueries(pqxx::transaction_base& tx, const std::vector<int>& pids,
                                       int max_length);

// The ungranted lock and pg_blocking_pids() of each of `pids`, and of nobody
// else: pg_blocking_pids() takes every lock-manager partition lock, so it is
// called once per waiting session only. `pids` must not be empty.
// `has_waitstart`: the server has pg_locks.waitstart (14+).
std::vector<LockWaitRow> ReadLockWaits(pqxx::transaction_base& tx, const std::vector<int>& pids,
                                       bool has_waitstart);

DatabaseCounters ReadDatabaseCounters(pqxx::transaction_base& tx);

// The tables among `names` that exist, as to_regclass() finds them.
std::vector<TableRow> ResolveTables(pqxx::transaction_base& tx,
                                    const std::vector<std::string>& names);

// The primary key columns of a table in key order; empty if it has none.
std::vector<KeyColumn> ReadPrimaryKey(pqxx::transaction_base& tx, std::uint32_t relation);

// The key of the row version at (page, tuple), each value as text; nullopt if
// no visible version is there any more. A ctid lookup never waits on row locks.
std::optional<std::vector<std::optional<std::string>>> ReadRowKey(
    pqxx::transaction_base& tx, const TableRow& table, const std::vector<KeyColumn>& key,
    std::int64_t page, std::int64_t tuple);

// "{1,2,3}" and back: the text form of int[] parameters and results.
std::string IntArrayLiteral(const std::vector<int>& values);
std::vector<int> ParseIntArray(const std::string& text);

}  // namespace seatwatch::locks
