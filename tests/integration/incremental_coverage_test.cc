// Incremental mode when the publication stops covering a watched table,
// against the daemon: `ALTER PUBLICATION seatwatch DROP TABLE tickets` is
// seen within a drain cycle (resync coverage, the checks' mode full, the log
// and the status page say so), a ticket deleted meanwhile is reported by the
// full pass, and once the table is back the checks resync and run
// incrementally again.
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <string>

#include "support/daemon_process.h"
#include "support/http_client.h"
#include "support/incremental_daemon.h"
#include "support/scratch_db.h"

namespace seatwatch {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::IncrementalDaemon;
using testing::Sample;
using testing::ScratchDatabase;
using testing::SecondsSince;
using testing::WaitFor;

const char* const kSoldWithoutTicket =
    "seatwatch_invariant_violations{invariant=\"sold_seat_without_ticket\",event_id=\"6\"}";
const char* const kCoverageResyncs = "seatwatch_changes_resyncs_total{reason=\"coverage\"}";

std::string Passes(const std::string& check, const std::string& reason) {
  return "seatwatch_full_passes_total{check=\"" + check + "\",reason=\"" + reason + "\"}";
}

TEST(IncrementalCoverageTest, ATableDroppedFromThePublicationFallsBackToFullPassesAndBack) {
  ScratchDatabase db("sw_incr_coverage");
  testing::SeedBookingSeats(db, 1, 1);
  testing::RunChangesSetup(db);
  // A correct sale whose ticket will be deleted.
  db.Exec("BEGIN; UPDATE seats SET status = 'sold', holder = 'fan-c' "
          "WHERE event_id = 6 AND seat = 'V5'; "
          "INSERT INTO tickets (event_id, seat, fan) VALUES (6, 'V5', 'fan-c'); "
          "INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents, status) "
          "VALUES ('c1', 6, 'V5', 'fan-c', 100, 'confirmed'); COMMIT");
  IncrementalDaemon daemon(db);
  ASSERT_TRUE(daemon.WaitIncremental(60s)) << daemon.Metrics() << daemon.process().Log();
  ASSERT_TRUE(testing::AllInvariantsOk(daemon.Metrics())) << daemon.Metrics();
  double coverage_passes = Sample(daemon.Metrics(), Passes("booking_reconciliation", "coverage"));

  db.Exec("ALTER PUBLICATION seatwatch DROP TABLE tickets");
  db.Exec("DELETE FROM tickets WHERE event_id = 6 AND seat = 'V5'");
  auto committed = Clock::now();
  std::string text;
  // Within a drain cycle or two ([changes] interval 1 s), not at the backstop.
  bool seen = WaitFor([&] {
    text = daemon.Metrics();
    return Sample(text, kSoldWithoutTicket) == 1 && Sample(text, kCoverageResyncs) == 1;
  }, 10s);
  double latency = SecondsSince(committed);
  EXPECT_TRUE(seen) << "MISSED after " << latency << " s\n" << text;
  std::cerr << "ticket deleted while tickets is not published: reported " << latency
            << " s after commit\n";
  EXPECT_EQ(Sample(text, "seatwatch_changes_up"), 0);
  EXPECT_FALSE(daemon.Incremental(text)) << text;
  EXPECT_EQ(Sample(text, "seatwatch_check_mode{check=\"booking_reconciliation\",mode=\"full\"}"),
            1);
  std::string page = testing::HttpGet(daemon.port(), "/").body;
  EXPECT_NE(page.find("coverage lost"), std::string::npos) << page;
  std::string log = daemon.process().Log();
  EXPECT_NE(log.find("coverage"), std::string::npos) << log;
  EXPECT_NE(log.find("public.tickets"), std::string::npos) << log;

  // Whole again: a resync, a full pass for coverage, incremental again.
  db.Exec("ALTER PUBLICATION seatwatch ADD TABLE tickets (event_id, seat)");
  ASSERT_TRUE(daemon.WaitIncremental(40s)) << daemon.Metrics() << daemon.process().Log();
  text = daemon.Metrics();
  EXPECT_EQ(Sample(text, kCoverageResyncs), 1);
  EXPECT_GT(Sample(text, Passes("booking_reconciliation", "coverage")), coverage_passes);
  EXPECT_EQ(Sample(text, kSoldWithoutTicket), 1);
  // And a repair is seen incrementally.
  db.Exec("INSERT INTO tickets (event_id, seat, fan) VALUES (6, 'V5', 'fan-c')");
  EXPECT_TRUE(WaitFor([&] { return testing::AllInvariantsOk(daemon.Metrics()); }, 10s))
      << daemon.Metrics();
  log = daemon.process().Log();
  EXPECT_NE(log.find("coverage whole again"), std::string::npos) << log;
}

}  // namespace
}  // namespace seatwatch
