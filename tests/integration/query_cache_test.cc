// The poll's QueryCache against the scratch PostgreSQL: a statement run
// again and again (RunRepeated) is a named prepared statement of a direct
// session, planned once there, with the same rows as an unnamed one; through
// a pooler (named statements not allowed) nothing is left on the session.
// What a run waited on the server is counted in its transaction.
#include <gtest/gtest.h>

#include <string>

#include <pqxx/nontransaction>
#include <pqxx/transaction>

#include "db/lazy_transaction.h"
#include "db/query_cache.h"
#include "support/scratch_db.h"

namespace seatwatch {
namespace {

using testing::ScratchDatabase;

constexpr const char* kSql = "SELECT seat FROM seats WHERE event_id = ANY ($1::int[]) ORDER BY seat";

// The session's prepared statements with kSql's text.
int PreparedCopies(pqxx::connection& connection) {
  pqxx::nontransaction tx(connection);
  return tx.exec_params1("SELECT count(*) FROM pg_prepared_statements WHERE statement = $1",
                         std::string(kSql))[0]
      .as<int>();
}

std::vector<std::string> Seats(const db::Rows& rows) {
  std::vector<std::string> seats;
  for (const auto& row : rows.values) seats.push_back(row.at(0).value_or("NULL"));
  return seats;
}

class QueryCacheTest : public ::testing::Test {
 protected:
  QueryCacheTest() : db_("sw_query_cache") {
    db_.Exec("INSERT INTO seats (event_id, seat) VALUES (1, 'A1'), (1, 'A2'), (2, 'B1')");
  }

  // Two polls, each its own cache and transaction, asking for other events.
  std::vector<std::vector<std::string>> TwoPolls(pqxx::connection& connection, bool named) {
    std::vector<std::vector<std::string>> seen;
    for (const char* events : {"{1}", "{1,2}"}) {
      db::QueryCache queries;
      queries.set_named_statements(named);
      pqxx::read_transaction tx(connection);
      db::LazyTransaction lazy(tx);
      seen.push_back(Seats(*queries.RunRepeated(lazy, kSql, {events}, "")));
      EXPECT_GT(lazy.database_seconds(), 0.0);
      // Asked again in the same poll: the cache answers, the server is not asked.
      double waited = lazy.database_seconds();
      queries.RunRepeated(lazy, kSql, {events}, "");
      EXPECT_EQ(lazy.database_seconds(), waited);
      EXPECT_EQ(queries.executions(), 1);
      tx.commit();
    }
    return seen;
  }

  ScratchDatabase db_;
};

const std::vector<std::vector<std::string>> kBothPolls{{"A1", "A2"}, {"A1", "A2", "B1"}};

TEST_F(QueryCacheTest, ARepeatedStatementIsNamedOnADirectSession) {
  auto connection = db_.Connect();
  EXPECT_EQ(TwoPolls(*connection, true), kBothPolls);
  // Prepared once, used by both polls.
  EXPECT_EQ(PreparedCopies(*connection), 1);
}

TEST_F(QueryCacheTest, ThroughAPoolerARepeatedStatementStaysUnnamed) {
  auto connection = db_.Connect();
  EXPECT_EQ(TwoPolls(*connection, false), kBothPolls);
  EXPECT_EQ(PreparedCopies(*connection), 0);
}

}  // namespace
}  // namespace seatwatch
