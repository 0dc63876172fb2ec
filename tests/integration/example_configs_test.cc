// The example configs of config/examples/ against the scratch PostgreSQL,
// each on the tables of its own .sql file with rows that break it in known
// places: --check-config proves it (exit 0), and the daemon reports exactly
// those keys with exactly those values, no other. (django-workshops.toml is
// run by e2e.django_client against a real Django site.)
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "support/daemon_process.h"
#include "support/daemon_test.h"
#include "support/incremental_daemon.h"
#include "support/test_env.h"

namespace seatwatch {
namespace {

using namespace std::chrono_literals;
using testing::DaemonProcess;
using testing::Sample;
using testing::WaitFor;

class ExampleConfigsTest : public testing::DaemonTest {
 protected:
  ExampleConfigsTest()
      : DaemonTest("sw_examples", "seatwatch-examples", testing::ScratchDatabase::Schema::kNone) {}

  std::string Example(const std::string& file) const {
    return testing::SourceDir() + "/config/examples/" + file;
  }

  // Loads <name>.sql and `rows`, proves <name>.toml, runs the daemon on it
  // until every check of `checks` has run, and returns every
  // seatwatch_invariant_violations series.
  std::map<std::string, double> Violations(const std::string& name, const std::string& rows,
                                           const std::vector<std::string>& checks,
                                           const std::string& schema = "") {
    db_.Exec(testing::ReadFile(schema.empty() ? Example(name + ".sql") : schema));
    db_.Exec(rows);
    std::string log;
    {
      DaemonProcess check({"--config", Example(name + ".toml"), "--check-config"}, Env());
      EXPECT_TRUE(check.WaitExit(60s));
      log = check.Log();
      EXPECT_EQ(check.Stop(), 0) << log;
    }
    EXPECT_NE(log.find("every query runs and returns its configured columns"), std::string::npos)
        << log;
    EXPECT_EQ(log.find("warning:"), std::string::npos) << log;
    DaemonProcess daemon(
        {"--config", Example(name + ".toml"), "--listen", "127.0.0.1:" + std::to_string(port_)},
        Env());
    std::string text;
    EXPECT_TRUE(WaitFor([&] {
      text = Metrics();
      for (const auto& check : checks) {
        if (Sample(text, "seatwatch_check_success{check=\"" + check + "\"}") != 1) return false;
      }
      return true;
    }, 30s)) << text << daemon.Log();
    EXPECT_EQ(daemon.Stop(), 0) << daemon.Log();
    return testing::SeriesWithPrefix(text, "seatwatch_invariant_violations{");
  }
};

TEST_F(ExampleConfigsTest, Shop) {
  auto found = Violations("shop",
                          "INSERT INTO product VALUES (1, 'lamp', 5), (2, 'desk', 2), "
                          "(3, 'chair', -1);"
                          "INSERT INTO order_line (order_id, product_id, quantity, state) VALUES "
                          "(1, 1, 3, 'open'), (2, 1, 2, 'paid'), "           // 5 of 5
                          "(3, 2, 2, 'open'), (4, 2, 1, 'open'), "           // 3 of 2
                          "(5, 2, 5, 'cancelled'), "                         // not counted
                          "(6, 9, 1, 'open');",                              // no product 9
                          {"shop", "negative_stock"});
  std::map<std::string, double> expected = {
      {"seatwatch_invariant_violations{invariant=\"oversold\",product_id=\"2\"}", 1},
      {"seatwatch_invariant_violations{invariant=\"order_line_without_product\",product_id=\"9\"}",
       1},
      {"seatwatch_invariant_violations{invariant=\"negative_stock\",id=\"3\"}", 1},
  };
  EXPECT_EQ(found, expected);
}

TEST_F(ExampleConfigsTest, Ledger) {
  auto found = Violations("ledger",
                          "INSERT INTO account (id, owner, balance) VALUES (1, 'ann', 15.25), "
                          "(2, 'bob', 14.00), (3, 'cid', 3.25);"
                          "INSERT INTO entry (account_id, posting_id, line, amount) VALUES "
                          "(1, 1, 1, 10.00), (1, 2, 1, 5.25), "   // 15.25: right
                          "(2, 3, 1, 7.00), (2, 3, 1, 7.00), "    // right, but posted twice
                          "(3, 4, 1, 1.00), "                     // 1.00, not 3.25
                          "(4, 5, 1, 1.00);",                     // no account 4
                          {"balance_drift", "entry_without_account", "entry_posted_twice"});
  std::map<std::string, double> expected = {
      {"seatwatch_invariant_violations{invariant=\"balance_drift\",id=\"3\"}", 2.25},
      {"seatwatch_invariant_violations{invariant=\"entry_posted_twice\",account_id=\"2\"}", 1},
      {"seatwatch_invariant_violations{invariant=\"entry_without_account\",account_id=\"4\"}", 1},
  };
  EXPECT_EQ(found, expected);
}

TEST_F(ExampleConfigsTest, Coupons) {
  auto found = Violations("coupons",
                          "INSERT INTO coupon VALUES ('A', 2), ('B', 1), ('C', 5);"
                          "INSERT INTO redemption (code, fan, refunded) VALUES "
                          "('A', 'ann', false), ('A', 'bob', false), ('A', 'cid', true), "
                          "('B', 'ann', false), ('B', 'bob', false), ('B', 'ann', true), "
                          "('C', 'eve', false), ('C', 'eve', false);",
                          {"coupons"});
  std::map<std::string, double> expected = {
      {"seatwatch_invariant_violations{invariant=\"coupon_overused\",code=\"B\"}", 1},
      {"seatwatch_invariant_violations{invariant=\"coupon_redeemed_twice_by_a_fan\",code=\"C\"}",
       1},
  };
  EXPECT_EQ(found, expected);
}

// The booking pack declared: the seven violations the benchmark injects
// (bench/sql/violations.sql), exactly as the hand-written pack reports them.
TEST_F(ExampleConfigsTest, BookingDeclaredReportsWhatTheHandWrittenPackReports) {
  std::string seed = testing::ReadFile(testing::SourceDir() + "/bench/sql/seed.sql");
  std::string violations = testing::ReadFile(testing::SourceDir() + "/bench/sql/violations.sql");
  auto strip = [](std::string sql) {  // psql's own lines
    std::string out;
    size_t at = 0;
    while (at < sql.size()) {
      size_t end = sql.find('\n', at);
      if (end == std::string::npos) end = sql.size();
      std::string line = sql.substr(at, end - at);
      if (line.rfind("\\", 0) != 0) out += line + "\n";
      at = end + 1;
    }
    return out;
  };
  std::string rows = strip(seed);
  for (std::string::size_type at; (at = rows.find(":events")) != std::string::npos;) {
    rows.replace(at, 7, "6");
  }
  auto found = Violations("booking", rows + strip(violations), {"booking"},
                          testing::SourceDir() + "/queries/booking/schema.sql");
  std::map<std::string, double> expected;
  for (const auto& [event, invariant] : std::vector<std::pair<int, std::string>>{
           {1, "confirmed_payment_without_ticket"}, {1, "sold_seat_without_ticket"},
           {2, "ticket_without_confirmed_payment"}, {2, "ticket_without_sold_seat"},
           {3, "double_confirmed_payment"}, {4, "fan_over_limit"},
           {5, "ticket_without_confirmed_payment"}}) {
    expected["seatwatch_invariant_violations{invariant=\"" + invariant + "\",event_id=\"" +
             std::to_string(event) + "\"}"] = 1;
  }
  EXPECT_EQ(found, expected);
}

// The shipped config (config/seatwatch.toml, the booking pack declared)
// against the hand-written pack (queries/booking/reconciliation.sql) on
// the benchmark's rows with its seven violations, expired holds and a hold
// with no expiry: every violation and every inventory sample agree, zeros
// included.
TEST_F(ExampleConfigsTest, TheShippedPackReportsWhatTheHandWrittenPackReports) {
  db_.Exec(testing::ReadFile(testing::SourceDir() + "/queries/booking/schema.sql"));
  std::string rows = testing::ReadFile(testing::SourceDir() + "/bench/sql/seed.sql") +
                     testing::ReadFile(testing::SourceDir() + "/bench/sql/violations.sql");
  std::string sql;
  for (size_t at = 0; at < rows.size();) {
    size_t end = rows.find('\n', at);
    if (end == std::string::npos) end = rows.size();
    std::string line = rows.substr(at, end - at);
    if (line.rfind("\\", 0) != 0) sql += line + "\n";
    at = end + 1;
  }
  for (std::string::size_type at; (at = sql.find(":events")) != std::string::npos;) {
    sql.replace(at, 7, "6");
  }
  db_.Exec(sql);
  db_.Exec("UPDATE seats SET status = 'held', holder = 'late', hold_expires_at = now() - interval '1 minute' "
           "WHERE event_id = 6 AND seat IN (SELECT seat FROM seats WHERE event_id = 6 AND status = 'free' "
           "ORDER BY seat LIMIT 2);"
           "UPDATE seats SET status = 'held', holder = 'nobody', hold_expires_at = NULL "
           "WHERE event_id = 6 AND seat IN (SELECT seat FROM seats WHERE event_id = 6 AND status = 'free' "
           "ORDER BY seat LIMIT 1);");
  // The hand-written pack's rows, as the daemon would export them.
  std::map<std::string, double> expected;
  auto connection = db_.Connect();
  pqxx::work tx(*connection);
  std::string reconciliation =
      testing::ReadFile(testing::SourceDir() + "/queries/booking/reconciliation.sql");
  reconciliation.erase(reconciliation.find_last_not_of(" \n;") + 1);
  for (const auto& row : tx.exec_params(reconciliation, 4)) {
    std::string event = row[0].as<std::string>();
    if (!row[1].is_null()) {
      expected["seatwatch_invariant_violations{invariant=\"" +
               row[1].as<std::string>() + "\",event_id=\"" + event + "\"}"] = row[2].as<double>();
    } else {
      expected["seatwatch_event_inventory{event_id=\"" + event + "\",kind=\"" +
               row[3].as<std::string>() + "\"}"] = row[4].as<double>();
    }
  }
  tx.commit();
  ASSERT_EQ(expected.size(), 7u + 7u * 6u);
  std::string config = testing::SourceDir() + "/config/seatwatch.toml";
  {
    DaemonProcess check({"--config", config, "--check-config"}, Env());
    ASSERT_TRUE(check.WaitExit(60s));
    EXPECT_EQ(check.Stop(), 0) << check.Log();
  }
  DaemonProcess daemon({"--config", config, "--listen", "127.0.0.1:" + std::to_string(port_)},
                       Env());
  std::string text;
  ASSERT_TRUE(WaitFor([&] {
    text = Metrics();
    return Sample(text, "seatwatch_check_success{check=\"booking_reconciliation\"}") == 1 &&
           Sample(text, "seatwatch_check_success{check=\"event_inventory\"}") == 1;
  }, 30s)) << text << daemon.Log();
  EXPECT_EQ(daemon.Stop(), 0) << daemon.Log();
  std::map<std::string, double> found = testing::SeriesWithPrefix(text, "seatwatch_invariant_violations{");
  for (const auto& [series, value] : testing::SeriesWithPrefix(text, "seatwatch_event_inventory{")) {
    found[series] = value;
  }
  EXPECT_EQ(found.size(), expected.size());
  for (const auto& [series, value] : expected) {
    auto it = found.find(series);
    EXPECT_TRUE(it != found.end() && it->second == value)
        << series << ": the hand-written pack says " << value << ", the shipped pack "
        << (it == found.end() ? std::string("nothing") : std::to_string(it->second));
  }
}

}  // namespace
}  // namespace seatwatch
