// The shipped booking pack's row terms (what each row of seats, tickets and
// payments adds to the check's pass) and a RowLedger fed by hand: the rows
// it makes of a key's rows, a key out of balance read exactly, an at_most
// group over its limit, the next expiry, the read that follows a changed
// row. What the database makes of the same terms is tested against a full
// pass in tests/integration (IncrementalModeTest).
#include "checks/row_ledger.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/load.h"
#include "support/test_env.h"
#include "unit/config_text.h"

namespace seatwatch::checks {
namespace {

using Row = RowLedger::Row;

const config::QueryConfig& Query(const config::Config& config, const std::string& name) {
  for (const auto& q : config.queries) {
    if (q.name == name) return q;
  }
  throw std::runtime_error("no query " + name);
}

const declare::RowTerms& BookingTerms() {
  static const config::Config config =
      config::LoadConfig(testing::SourceDir() + "/config/seatwatch.toml");
  return *Query(config, "booking_reconciliation").row_terms;
}

std::size_t TableNamed(const declare::RowTerms& terms, const std::string& name) {
  for (std::size_t t = 0; t < terms.tables.size(); ++t) {
    if (terms.tables[t].table.name == name) return t;
  }
  throw std::runtime_error("no table " + name);
}

int TallyFlag(const declare::RowTerms& terms, const std::string& tally) {
  for (const auto& metric : terms.metrics) {
    for (const auto& at : metric.tallies) {
      if (at.name == tally) return at.flag;
    }
  }
  throw std::runtime_error("no tally " + tally);
}

// The result of a read: ledger_table, ledger_key, two identity
// columns, then the widest table's terms.
class Reads {
 public:
  explicit Reads(const declare::RowTerms& terms) : terms_(terms) {
    for (const auto& table : terms.tables) width_ = std::max(width_, table.terms.size());
    width_ = std::max(width_, terms.proofs.size());
  }
  // A row of `table` under `key` named (a, b), its terms all false or NULL
  // but `set` (term index -> text).
  Row Of(const std::string& table, const std::string& key, const std::string& a,
         const std::string& b, const std::map<int, std::string>& set) const {
    std::size_t t = TableNamed(terms_, table);
    Row row(4 + width_);
    row[0] = std::to_string(t);
    row[1] = key;
    row[2] = a;
    row[3] = b;
    for (std::size_t i = 0; i < terms_.tables[t].terms.size(); ++i) row[4 + i] = "false";
    for (const auto& side : terms_.tables[t].sides) {
      if (side.hash >= 0) row[4 + static_cast<std::size_t>(side.hash)] = std::nullopt;
    }
    for (const auto& expiry : terms_.tables[t].expiries) {
      row[4 + static_cast<std::size_t>(expiry.epoch)] = std::nullopt;
    }
    for (const auto& [term, text] : set) row[4 + static_cast<std::size_t>(term)] = text;
    return row;
  }
  Row Proofs(bool hold) const {
    Row row(4 + width_);
    row[0] = "-1";
    for (std::size_t i = 0; i < terms_.proofs.size(); ++i) row[4 + i] = hold ? "true" : "false";
    return row;
  }
  // A sold seat (or a ticket, or a confirmed payment: the side's first)
  // whose compared columns hash to `hash`.
  std::map<int, std::string> Side(const std::string& table, std::size_t side,
                                  const std::string& hash) const {
    const auto& s = terms_.tables[TableNamed(terms_, table)].sides.at(side);
    return {{s.rows, "true"}, {s.hashed, "true"}, {s.hash, hash}};
  }

 private:
  const declare::RowTerms& terms_;
  std::size_t width_ = 0;
};

db::Rows Result(std::vector<Row> rows) {
  db::Rows out;
  out.values = std::move(rows);
  return out;
}

TEST(RowTermsTest, TheShippedBookingPackIsKeptRowByRow) {
  const declare::RowTerms& terms = BookingTerms();
  EXPECT_EQ(terms.not_row_wise, "");
  ASSERT_EQ(terms.tables.size(), 3u);
  ASSERT_EQ(terms.violations.size(), 6u);
  int gates = 0, proven = 0, limits = 0;
  for (const auto& v : terms.violations) {
    gates += v.gate.has_value();
    proven += v.gate && v.gate->proof >= 0;
    limits += v.limit.has_value();
  }
  EXPECT_EQ(gates, 5);   // four exists, and the unique one riding on tickets' index
  EXPECT_EQ(proven, 1);
  EXPECT_EQ(limits, 1);  // fan_over_limit
  EXPECT_EQ(terms.violations[5].limit->invariant, "fan_over_limit");
  EXPECT_EQ(terms.violations[5].limit->limit, 4);
  EXPECT_EQ(terms.violations[5].limit->groups.size(), 1u);  // holder, within the event
  EXPECT_EQ(terms.proofs.size(), 1u);
  ASSERT_EQ(terms.expiries.size(), 1u);
  EXPECT_EQ(terms.tables[terms.expiries[0].table].table.name, "seats");
  EXPECT_EQ(terms.tail_labels, std::vector<std::string>{"kind"});
  ASSERT_EQ(terms.metrics.size(), 1u);
  EXPECT_EQ(terms.metrics[0].tallies.size(), 7u);
  std::size_t seats = TableNamed(terms, "seats");
  EXPECT_EQ(terms.tables[seats].key, "event_id");
  EXPECT_NE(terms.tables[seats].terms.at(0).find("status = 'sold'"), std::string::npos)
      << terms.tables[seats].terms.at(0);
}

TEST(RowTermsTest, AnEntryReadWholeKeepsTheCheckReadingWhole) {
  config::Config config = config::ParseText(R"(
[[invariant]]
check = "places"
name = "fan_over_places"
help = "A fan has booked more places than allowed"
kind = "at_most"
key = "workshop_id"
rows = { table = "registration", columns = ["workshop_id", "fan"], sum = "places" }
limit = 6
)");
  // A sum of a column is no count of rows: the check reads each key whole.
  const config::QueryConfig& q = Query(config, "places");
  EXPECT_TRUE(q.incremental());
  EXPECT_EQ(q.row_terms, nullptr);
  EXPECT_EQ(q.not_row_wise, "entry fan_over_places (at_most) is read whole");
}

class RowLedgerTest : public ::testing::Test {
 protected:
  RowLedgerTest() : terms_(BookingTerms()), reads_(terms_), ledger_(terms_) {
    ledger_.SetIdentityColumns("seats", {"event_id", "seat"});
    ledger_.SetIdentityColumns("tickets", {"event_id", "seat"});
    ledger_.SetIdentityColumns("payments", {"idempotency_key", "event_id"});
  }

  std::map<int, std::string> Tally(const std::string& tally,
                                   std::map<int, std::string> set = {}) const {
    set[TallyFlag(terms_, tally)] = "true";
    return set;
  }

  // Event 7: S1 sold to ann, its ticket, its confirmed payment; S2 free.
  void SeedBalancedEvent() {
    std::map<int, std::string> sold = reads_.Side("seats", 0, "11");
    sold[TallyFlag(terms_, "seats_sold")] = "true";
    ASSERT_TRUE(ledger_.CanSeed());
    ledger_.ApplySeed({"7"}, Result({
        reads_.Of("seats", "7", "7", "S1", sold),
        reads_.Of("seats", "7", "7", "S2", Tally("seats_free")),
        reads_.Of("tickets", "7", "7", "S1", reads_.Side("tickets", 0, "11")),
        reads_.Of("payments", "7", "p1", "7", reads_.Side("payments", 0, "11")),
    }));
  }

  static std::map<std::string, std::string> Tallies(const std::vector<Row>& rows) {
    std::map<std::string, std::string> out;
    for (const auto& row : rows) {
      if (row[4]) out[*row[4]] = *row[5];
    }
    return out;
  }

  const declare::RowTerms& terms_;
  Reads reads_;
  RowLedger ledger_;
};

TEST_F(RowLedgerTest, ABalancedKeyMakesItsTalliesAndNoViolation) {
  SeedBalancedEvent();
  EXPECT_TRUE(ledger_.Has("7"));
  EXPECT_EQ(ledger_.row_count(), 4u);
  auto rows = ledger_.RowsOf("7", 6);
  ASSERT_TRUE(rows.has_value());
  EXPECT_EQ(rows->size(), 7u);  // the seven tallies, no violation, no hold to expire
  EXPECT_EQ(Tallies(*rows), (std::map<std::string, std::string>{
                                {"seats_free", "1"}, {"seats_held", "0"},
                                {"seats_held_expired", "0"}, {"seats_sold", "1"},
                                {"tickets", "1"}, {"payments_started", "0"},
                                {"payments_confirmed", "1"}}));
  for (const auto& row : *rows) EXPECT_EQ(row[0], "7");
  // Another width than the check's result: nothing made up.
  EXPECT_FALSE(ledger_.RowsOf("7", 5).has_value());
  EXPECT_FALSE(ledger_.RowsOf("8", 6).has_value());
}

TEST_F(RowLedgerTest, ARowGoneOutOfBalanceSendsTheKeyToTheExactRead) {
  SeedBalancedEvent();
  // The ticket was deleted: asked for, not read back.
  RowLedger::RowSet asked{{"tickets", {{"7", "S1"}}}};
  RowLedger::Statement read = ledger_.ReadStatement(asked);
  // One parameter a table, in the terms' order; none asked of the others.
  std::size_t tickets = TableNamed(terms_, "tickets");
  EXPECT_NE(read.sql.find("jsonb_populate_recordset(NULL::tickets, $" +
                          std::to_string(tickets + 1) + "::jsonb)"),
            std::string::npos)
      << read.sql;
  ASSERT_EQ(read.params.size(), 3u);
  for (std::size_t t = 0; t < 3; ++t) {
    EXPECT_EQ(read.params[t], t == tickets ? R"([{"event_id":"7","seat":"S1"}])" : "[]");
  }
  // The same text whatever is asked: planned once by a session.
  EXPECT_EQ(ledger_.ReadStatement({{"seats", {{"7", "S2"}}}}).sql, read.sql);
  EXPECT_TRUE(ledger_.ApplyRead(asked, Result({reads_.Proofs(true)})));
  EXPECT_EQ(ledger_.row_count(), 3u);
  EXPECT_FALSE(ledger_.RowsOf("7", 6).has_value());
  // It comes back: balanced again.
  EXPECT_TRUE(ledger_.ApplyRead(
      asked, Result({reads_.Of("tickets", "7", "7", "S1", reads_.Side("tickets", 0, "11")),
                     reads_.Proofs(true)})));
  EXPECT_TRUE(ledger_.RowsOf("7", 6).has_value());
  // Same counts, another fan on the ticket: the hashes differ.
  EXPECT_TRUE(ledger_.ApplyRead(
      asked, Result({reads_.Of("tickets", "7", "7", "S1", reads_.Side("tickets", 0, "12")),
                     reads_.Proofs(true)})));
  EXPECT_FALSE(ledger_.RowsOf("7", 6).has_value());
}

TEST_F(RowLedgerTest, AProofThatFailsSendsTheKeyToTheExactRead) {
  SeedBalancedEvent();
  EXPECT_FALSE(ledger_.ApplyRead({}, Result({reads_.Proofs(false)})));
  EXPECT_FALSE(ledger_.RowsOf("7", 6).has_value());
  EXPECT_TRUE(ledger_.ApplyRead({}, Result({reads_.Proofs(true)})));
  EXPECT_TRUE(ledger_.RowsOf("7", 6).has_value());
}

TEST_F(RowLedgerTest, HoldsOverTheLimitAndTheNextExpiry) {
  SeedBalancedEvent();
  const auto& limit = *terms_.violations[5].limit;
  const auto& expiry = terms_.tables[TableNamed(terms_, "seats")].expiries.at(0);
  RowLedger::RowSet asked;
  std::vector<Row> rows;
  for (int i = 0; i < 5; ++i) {
    std::string seat = "H" + std::to_string(i);
    asked["seats"].insert({"7", seat});
    std::map<int, std::string> held = Tally("seats_held");
    held[limit.flag] = "true";
    held[limit.groups[0]] = "bob";
    held[expiry.future] = "true";
    held[expiry.epoch] = i == 3 ? "1796000000.25" : "1796000100.5";
    rows.push_back(reads_.Of("seats", "7", "7", seat, held));
  }
  rows.push_back(reads_.Proofs(true));
  ASSERT_TRUE(ledger_.ApplyRead(asked, Result(rows)));
  auto made = ledger_.RowsOf("7", 6);
  ASSERT_TRUE(made.has_value());
  ASSERT_GE(made->size(), 2u);
  EXPECT_EQ((*made)[0][1], "fan_over_limit");
  EXPECT_EQ((*made)[0][2], "1");  // one fan over the limit
  EXPECT_EQ((*made)[1][1], std::nullopt);
  EXPECT_EQ((*made)[1][3], "1796000000.25");  // the earliest hold, as read
  EXPECT_EQ(Tallies(*made).at("seats_held"), "5");
  // The hold that lapses first is read again once it has.
  EXPECT_TRUE(ledger_.Expired("7", 1795999999).empty());
  EXPECT_EQ(ledger_.Expired("7", 1796000001),
            (RowLedger::RowSet{{"seats", {{"7", "H3"}}}}));
}

TEST_F(RowLedgerTest, ARowIsInOneKeyAtATime) {
  // Payments named by their idempotency key alone: a payment can move to
  // another event under the same identity.
  RowLedger ledger(terms_);
  ledger.SetIdentityColumns("seats", {"event_id", "seat"});
  ledger.SetIdentityColumns("tickets", {"event_id", "seat"});
  ledger.SetIdentityColumns("payments", {"idempotency_key"});
  std::map<int, std::string> sold = reads_.Side("seats", 0, "11");
  sold[TallyFlag(terms_, "seats_sold")] = "true";
  ledger.ApplySeed({"7"}, Result({reads_.Of("seats", "7", "7", "S1", sold),
                                  reads_.Of("tickets", "7", "7", "S1", reads_.Side("tickets", 0, "11")),
                                  reads_.Of("payments", "7", "p1", "", reads_.Side("payments", 0, "11"))}));
  ledger.ApplySeed({"8"}, Result({reads_.Of("seats", "8", "8", "S1", Tally("seats_free"))}));
  ASSERT_TRUE(ledger.RowsOf("7", 6).has_value());
  EXPECT_EQ(ledger.row_count(), 4u);
  // p1 now belongs to event 8, started again: 7 has lost its confirmed
  // payment (out of balance), 8 holds it.
  RowLedger::RowSet asked{{"payments", {{"p1"}}}};
  ASSERT_TRUE(ledger.ApplyRead(
      asked, Result({reads_.Of("payments", "8", "p1", "", Tally("payments_started")),
                     reads_.Proofs(true)})));
  EXPECT_EQ(ledger.row_count(), 4u);
  EXPECT_FALSE(ledger.RowsOf("7", 6).has_value());
  auto eight = ledger.RowsOf("8", 6);
  ASSERT_TRUE(eight.has_value());
  EXPECT_EQ(Tallies(*eight).at("payments_started"), "1");
  // Read back under 7 as it was: 8 no longer counts it, 7 balances again.
  ASSERT_TRUE(ledger.ApplyRead(
      asked, Result({reads_.Of("payments", "7", "p1", "", reads_.Side("payments", 0, "11")),
                     reads_.Proofs(true)})));
  EXPECT_TRUE(ledger.RowsOf("7", 6).has_value());
  EXPECT_EQ(Tallies(*ledger.RowsOf("8", 6)).at("payments_started"), "0");
  // A key read whole takes the rows it holds from whichever key held them.
  ledger.ApplySeed({"8"}, Result({reads_.Of("seats", "8", "8", "S1", Tally("seats_free")),
                                  reads_.Of("payments", "8", "p1", "", Tally("payments_started"))}));
  EXPECT_EQ(ledger.row_count(), 4u);
  EXPECT_FALSE(ledger.RowsOf("7", 6).has_value());
  // Forgetting a key forgets which rows it held: p1 read under 7 again is
  // 7's alone.
  ledger.Forget("8");
  ASSERT_TRUE(ledger.ApplyRead(
      asked, Result({reads_.Of("payments", "7", "p1", "", reads_.Side("payments", 0, "11")),
                     reads_.Proofs(true)})));
  EXPECT_EQ(ledger.row_count(), 3u);
  EXPECT_TRUE(ledger.RowsOf("7", 6).has_value());
}

TEST_F(RowLedgerTest, TheLeastRecentlyReadKeysGoPastTheBound) {
  RowLedger small(terms_, 3);
  small.SetIdentityColumns("seats", {"event_id", "seat"});
  small.SetIdentityColumns("tickets", {"event_id", "seat"});
  EXPECT_FALSE(small.CanSeed());  // payments' identity not known yet
  small.SetIdentityColumns("payments", {"idempotency_key", "event_id"});
  small.ApplySeed({"1"}, Result({reads_.Of("seats", "1", "1", "A", Tally("seats_free")),
                                 reads_.Of("seats", "1", "1", "B", Tally("seats_free"))}));
  small.ApplySeed({"2"}, Result({reads_.Of("seats", "2", "2", "A", Tally("seats_free")),
                                 reads_.Of("seats", "2", "2", "B", Tally("seats_free"))}));
  EXPECT_FALSE(small.Has("1"));
  EXPECT_TRUE(small.Has("2"));
  EXPECT_EQ(small.row_count(), 2u);
  // Another identity for a table: nothing read under the old one stands.
  small.SetIdentityColumns("payments", {"id"});
  EXPECT_EQ(small.key_count(), 0u);
}

}  // namespace
}  // namespace seatwatch::checks
