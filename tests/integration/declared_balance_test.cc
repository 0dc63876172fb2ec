// The balance gate of declared checks against the scratch PostgreSQL: a
// full pass that reads each table once, counts and hashes each side by key
// and reads exactly only the keys out of balance, reports what reading
// every key exactly reports, on rows built to fool a gate: sides of equal
// size with swapped values, NULLs on both sides, a NULL key, duplicates,
// equal values with different texts (1.0 and 1.00), rows a `where` leaves
// out, in the full pass and in the scoped pass of incremental mode.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "db/local_settings.h"
#include "declare/compiled_check.h"
#include "declare/declaration.h"
#include "support/scratch_db.h"

namespace seatwatch {
namespace {

using declare::Declaration;
using declare::RowSet;

constexpr const char* kSchema = R"sql(
CREATE TABLE "Orders" (shop integer, ref text, amount numeric, state text NOT NULL,
                       due timestamptz);
CREATE TABLE receipt (shop integer, ref text, amount numeric);
CREATE INDEX ON "Orders" (shop);
CREATE INDEX ON receipt (shop);
INSERT INTO "Orders" VALUES
  (1, 'a', 10, 'paid', NULL), (1, 'b', 20, 'paid', now() + interval '1 hour'),
  (2, 'c', 5, 'paid', NULL),
  (3, 'e', 1, 'paid', NULL), (3, 'f', 2, 'paid', NULL),
  (4, 'g', NULL, 'paid', NULL),
  (5, 'h', 1.0, 'paid', now() + interval '2 hours'),
  (NULL, 'i', 3, 'paid', NULL),
  (6, 'j', 1, 'paid', NULL), (6, 'j', 1, 'paid', NULL),
  (7, 'k', 1, 'open', now() - interval '1 hour'),
  (9, 'n', 4, 'paid', NULL);
INSERT INTO receipt VALUES
  (1, 'a', 10), (1, 'b', 20),
  (2, 'd', 7),
  (3, 'e', 2), (3, 'f', 1),
  (4, 'g', NULL),
  (5, 'h', 1.00),
  (NULL, 'i', 3),
  (6, 'j', 1),
  (8, 'm', 1), (8, 'm', 1), (8, 'm', 2);
)sql";

RowSet Rows(const std::string& table, std::vector<std::string> columns,
            const std::string& where = "") {
  RowSet set;
  set.table = {"", table};
  set.columns = std::move(columns);
  set.where = where;
  return set;
}

Declaration Entry(const std::string& kind, const std::string& name, RowSet rows) {
  Declaration d;
  d.kind = kind;
  d.name = name;
  d.key = {"shop"};
  d.labels = {"shop"};
  d.rows = std::move(rows);
  return d;
}

std::vector<Declaration> Declarations() {
  std::vector<Declaration> out;
  // Each paid order has its receipt (same amount).
  out.push_back(Entry("exists", "order_without_receipt",
                      Rows("Orders", {"shop", "ref", "amount"}, "state = 'paid'")));
  out.back().in = Rows("receipt", {"shop", "ref", "amount"});
  // Each receipt has a paid order (by ref): covered by the pair above.
  out.push_back(Entry("exists", "receipt_without_order", Rows("receipt", {"shop", "ref"})));
  out.back().in = Rows("Orders", {"shop", "ref"}, "state = 'paid'");
  out.push_back(Entry("unique", "order_paid_twice",
                      Rows("Orders", {"shop", "ref"}, "state = 'paid'")));
  out.push_back(Entry("unique", "receipt_twice", Rows("receipt", {"shop", "ref", "amount"})));
  out.push_back(Entry("at_most", "orders_due",
                      Rows("Orders", {"shop"}, "due > now()")));
  out.back().rows.expires = "due";
  out.back().limit = 5;
  return out;
}

// invariant/shop -> violations; expiry/shop -> 1 when a next expiry is set.
using Result = std::map<std::string, double>;

Result Read(const pqxx::result& rows) {
  Result out;
  for (const auto& row : rows) {
    std::string shop = row["shop"].is_null() ? "NULL" : row["shop"].c_str();
    if (row[declare::kInvariantColumn].is_null()) {
      out["expiry/" + shop] = row[declare::kExpiryColumn].is_null() ? 0 : 1;
    } else {
      out[std::string(row[declare::kInvariantColumn].c_str()) + "/" + shop] =
          row[declare::kViolationsColumn].as<double>();
    }
  }
  return out;
}

class DeclaredBalanceTest : public ::testing::Test {
 protected:
  DeclaredBalanceTest() : db_("sw_declared_balance", testing::ScratchDatabase::Schema::kNone) {
    db_.Exec(kSchema);
    compiled_ = declare::CompileCheck("orders", Declarations());
    conn_ = db_.Connect();
  }

  pqxx::result Run(const std::string& sql, const std::string& keys = "") {
    pqxx::work tx(*conn_);
    pqxx::result rows = keys.empty() ? tx.exec(sql) : tx.exec_params(sql, keys);
    tx.commit();
    return rows;
  }

  // What a part of the full pass's WITH holds, read with the pass's own
  // CTEs ahead of `select`.
  pqxx::result Part(const std::string& select) {
    const std::string& sql = compiled_.full_sql;
    return Run(sql.substr(0, sql.find("\n-- order_without_receipt (")) + "\n" + select);
  }

  testing::ScratchDatabase db_;
  declare::CompiledCheck compiled_;
  std::unique_ptr<pqxx::connection> conn_;
};

TEST_F(DeclaredBalanceTest, TheGatedFullPassReportsWhatTheExactReadingReports) {
  Result full = Read(Run(compiled_.full_sql));
  Result expected = {
      {"order_without_receipt/2", 1},     // c has no receipt
      {"order_without_receipt/3", 2},     // e and f: amounts swapped, counts equal
      {"order_without_receipt/4", 1},     // a NULL amount matches nothing
      {"order_without_receipt/9", 1},     // shop 9 has no receipt at all
      {"order_without_receipt/NULL", 1},  // nor does a NULL shop
      {"receipt_without_order/2", 1},     // d has no order
      {"receipt_without_order/8", 3},
      {"receipt_without_order/NULL", 1},
      {"order_paid_twice/6", 1},
      {"receipt_twice/8", 1},  // (m, 1) twice; (m, 2) is another row
      {"expiry/1", 1},
      {"expiry/5", 1},  // shop 7's due has passed
  };
  EXPECT_EQ(full, expected);

  // The scoped pass (a recheck of every key here) balances the same way,
  // its scans kept to the keys asked for; a NULL key is no key it can be
  // asked for.
  Result scoped = Read(Run(compiled_.scoped_sql, "{1,2,3,4,5,6,7,8,9}"));
  for (auto it = expected.begin(); it != expected.end();) {
    it = it->first.find("/NULL") != std::string::npos ? expected.erase(it) : std::next(it);
  }
  EXPECT_EQ(scoped, expected);
}

TEST_F(DeclaredBalanceTest, EachTableIsScannedOnceForItsSides) {
  const std::string& sql = compiled_.full_sql;
  auto count = [&](const std::string& text) {
    size_t n = 0;
    for (size_t at = sql.find(text); at != std::string::npos; at = sql.find(text, at + 1)) ++n;
    return n;
  };
  // One scan each for the two exists entries (the narrower pair is covered
  // by the wider one), with the at_most entry's expiry read in the same
  // scan of "Orders".
  EXPECT_EQ(count("FROM \"Orders\" AS t"), 1u) << sql;
  EXPECT_EQ(count("FROM receipt AS t"), 1u) << sql;
  EXPECT_EQ(count("hashtextextended(t.amount::text, hashtextextended(t.ref::text, 0))"), 2u)
      << sql;
  EXPECT_EQ(count("min(t.due) FILTER"), 1u) << sql;
  EXPECT_NE(compiled_.scoped_sql.find("FROM \"Orders\" AS t\n  WHERE t.shop = ANY ($1)\n"),
            std::string::npos)
      << compiled_.scoped_sql;

  // Balanced keys are not read exactly: on this data the exact reading of
  // order_without_receipt runs for the keys out of balance only.
  pqxx::result unbalanced = Part("SELECT k1 FROM seatwatch_unbalanced_1 ORDER BY k1");
  std::vector<int> keys;
  for (const auto& row : unbalanced) keys.push_back(row[0].as<int>());
  EXPECT_EQ(keys, (std::vector<int>{2, 3, 4, 5, 6, 9})) << "1 balances; 7 has no paid order";
}

// order_paid_twice's rows are one side of a pair (paid orders against
// receipts); once a unique index keeps receipts distinct on (shop, ref), a
// key that balances has no paid order twice, and only the keys out of
// balance are read for it. Without the index every key is read.
TEST_F(DeclaredBalanceTest, AUniqueEntryRidesOnTheBalanceWhenAUniqueIndexKeepsTheOtherSide) {
  EXPECT_EQ(Part("SELECT proven FROM seatwatch_distinct_3")[0][0].as<bool>(), false);
  EXPECT_EQ(Part("SELECT proven FROM seatwatch_distinct_4")[0][0].as<bool>(), false)
      << "no unique index on \"Orders\" for receipt_twice";

  db_.Exec("DELETE FROM receipt WHERE shop = 8;\n"
           "CREATE UNIQUE INDEX receipt_shop_ref ON receipt (shop, ref);\n"
           // Duplicates beyond a key that balances: a gate that skipped the
           // exact reading of unbalanced keys would miss this one.
           "INSERT INTO \"Orders\" VALUES (10, 'p', 1, 'paid', NULL), (10, 'p', 1, 'paid', NULL);\n"
           "INSERT INTO receipt VALUES (10, 'p', 1);\n");
  EXPECT_EQ(Part("SELECT proven FROM seatwatch_distinct_3")[0][0].as<bool>(), true);
  Result full = Read(Run(compiled_.full_sql));
  Result expected = {
      {"order_without_receipt/2", 1},   {"order_without_receipt/3", 2},
      {"order_without_receipt/4", 1},   {"order_without_receipt/9", 1},
      {"order_without_receipt/NULL", 1}, {"receipt_without_order/2", 1},
      {"receipt_without_order/NULL", 1}, {"order_paid_twice/6", 1},
      {"order_paid_twice/10", 1},        {"expiry/1", 1},
      {"expiry/5", 1},
  };
  EXPECT_EQ(full, expected);

  // An index with a predicate proves nothing: every key is read again.
  db_.Exec("DROP INDEX receipt_shop_ref;\n"
           "CREATE UNIQUE INDEX receipt_shop_ref ON receipt (shop, ref) WHERE amount > 0;\n");
  EXPECT_EQ(Part("SELECT proven FROM seatwatch_distinct_3")[0][0].as<bool>(), false);
  EXPECT_EQ(Read(Run(compiled_.full_sql)), expected);
}

// The gate hashes values by their text. A database (or role) that rounds
// floats in text (extra_float_digits <= 0) would print 0.1 + 0.2 and 0.3
// alike, and the key would balance with a violation in it; the check
// transaction's SET LOCALs (db::SetLocal, as every check runs them) put
// exact float text back.
TEST_F(DeclaredBalanceTest, FloatsBalanceByTheirExactTextWhateverTheDatabaseSets) {
  db_.Exec("CREATE TABLE reading (k integer, v float8);\n"
           "CREATE TABLE expected (k integer, v float8);\n"
           "INSERT INTO reading VALUES (1, 0.1::float8 + 0.2::float8), (2, 0.5);\n"
           "INSERT INTO expected VALUES (1, 0.3), (2, 0.5);\n"
           "ALTER DATABASE " + db_.name() + " SET extra_float_digits = 0;\n");
  Declaration d;
  d.kind = "exists";
  d.name = "reading_not_expected";
  d.key = {"k"};
  d.labels = {"k"};
  d.rows = Rows("reading", {"k", "v"});
  d.in = Rows("expected", {"k", "v"});
  declare::CompiledCheck compiled = declare::CompileCheck("readings", {d});

  auto conn = db_.Connect();  // a new session: the database's setting applies
  {
    pqxx::work tx(*conn);
    ASSERT_EQ(tx.exec1("SHOW extra_float_digits")[0].as<std::string>(), "0");
    EXPECT_TRUE(tx.exec(compiled.full_sql).empty()) << "rounded text balances key 1";
  }
  pqxx::work tx(*conn);
  db::SetLocal(tx, db::LocalSettings{});
  pqxx::result rows = tx.exec(compiled.full_sql);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["k"].as<std::string>(), "1");
  EXPECT_EQ(rows[0][declare::kViolationsColumn].as<double>(), 1);
}

}  // namespace
}  // namespace seatwatch
