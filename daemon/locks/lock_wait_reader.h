#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <pqxx/transaction_base>

#include "locks/lock_rows.h"
#include "locks/query_text.h"

namespace seatwatch::locks {

// The SQL of the locks check, one function per statement. Each runs on the
// caller's transaction and throws whatever libpqxx throws. Stateless: callers
// serialize use of a transaction themselves.

// The one statement of a lock poll. It reads pg_stat_activity once and
// returns, in one result:
//  - the client sessions of the database per state, counted by the server;
//  - only if some client session of the database waits on a Lock: each
//    waiter's ungranted pg_locks row and pg_blocking_pids(), and the session
//    of every waiter and of every blocker still in pg_stat_activity (query
//    text only for these, and only if shown at all);
//  - pg_stat_database's deadlocks and rollbacks.
// The gate is a one-time filter: with nobody waiting, pg_locks and
// pg_blocking_pids() (which takes every lock-manager partition lock) are not
// run at all. $1: characters of each query text to return (-1: none, 0:
// all); texts to normalize are read longer and cut after normalizing (see
// ShownQueryText). `has_waitstart`: the server has pg_locks.waitstart (14+).
std::string LockPollSql(bool has_waitstart);

// Runs LockPollSql as an unnamed statement (nothing that outlives the
// transaction, so that it works through a transaction pooler) and returns
// its rows, each query text as `show_query` says
// and cut to `query_max_length` characters (0: as long as the server keeps
// it). Throws whatever libpqxx throws.
LockPollRows ReadLockPoll(pqxx::transaction_base& tx, bool has_waitstart,
                          QueryTextMode show_query, int query_max_length);

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

// "{1,2,3}" to its values: the text form of an int[] result.
std::vector<int> ParseIntArray(const std::string& text);

}  // namespace seatwatch::locks
