// A violated key's lifecycle through the built daemon and the scratch
// PostgreSQL: a seat sold with no ticket opens a violation of its event
// (since when, detected), the ticket heals it (healed, how long it lasted,
// listed under /api/invariants' healed), and the same key violated and
// healed again is a second lifecycle, counted again, with a later start.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <string>
#include <thread>

#include "support/daemon_process.h"
#include "support/daemon_test.h"
#include "support/http_client.h"

namespace seatwatch {
namespace {

using namespace std::chrono_literals;
using testing::DaemonProcess;
using testing::HttpGet;
using testing::Sample;
using testing::WaitFor;

constexpr const char* kSince =
    "seatwatch_invariant_violated_since_timestamp_seconds{check=\"booking_reconciliation\","
    "invariant=\"sold_seat_without_ticket\",event_id=\"2\"}";
constexpr const char* kDetected =
    "seatwatch_invariant_violations_detected_total{check=\"booking_reconciliation\","
    "invariant=\"sold_seat_without_ticket\"}";
constexpr const char* kHealed =
    "seatwatch_invariant_violations_healed_total{check=\"booking_reconciliation\","
    "invariant=\"sold_seat_without_ticket\"}";
constexpr const char* kLasted =
    "seatwatch_invariant_violation_duration_seconds_count{check=\"booking_reconciliation\","
    "invariant=\"sold_seat_without_ticket\"}";

class ViolationLifecycleTest : public testing::DaemonTest {
 protected:
  ViolationLifecycleTest() : DaemonTest("sw_lifecycle", "seatwatch-lifecycle") {
    db_.Exec("INSERT INTO seats (event_id, seat) SELECT e, 'A' || n FROM generate_series(1, 2) e, "
             "generate_series(1, 5) n");
    UseShippedConfig();
  }

  void Break() {
    db_.Exec("UPDATE seats SET status = 'sold', holder = 'admin' WHERE event_id = 2 AND seat = 'A3'");
  }
  void Heal() { db_.Exec("UPDATE seats SET status = 'free', holder = NULL WHERE event_id = 2"); }
};

TEST_F(ViolationLifecycleTest, AKeyViolatedAndHealedTwiceHasTwoLifecycles) {
  DaemonProcess daemon({"--config", config_}, Env());
  ASSERT_TRUE(WaitReady()) << daemon.Log();
  ASSERT_TRUE(WaitFor([&] { return Sample(Metrics(), kDetected) == 0; }, 10s)) << Metrics();
  EXPECT_EQ(Sample(Metrics(), kHealed), 0);
  EXPECT_TRUE(std::isnan(Sample(Metrics(), kSince)));

  double before = std::chrono::duration<double>(
                      std::chrono::system_clock::now().time_since_epoch()).count();
  Break();
  ASSERT_TRUE(WaitFor([&] { return !std::isnan(Sample(Metrics(), kSince)); }, 10s)) << Metrics();
  double first_since = Sample(Metrics(), kSince);
  EXPECT_GE(first_since, before - 1);
  EXPECT_LE(first_since, before + 10);
  EXPECT_EQ(Sample(Metrics(), kDetected), 1);
  // The key stays open over the following runs, its start unchanged.
  std::this_thread::sleep_for(2500ms);
  EXPECT_EQ(Sample(Metrics(), kSince), first_since);
  EXPECT_EQ(Sample(Metrics(), kDetected), 1);
  auto api = HttpGet(port_, "/api/invariants");
  EXPECT_NE(api.body.find("\"labels\":{\"event_id\":\"2\"},\"value\":1,\"since_timestamp_seconds\":"),
            std::string::npos)
      << api.body;

  Heal();
  ASSERT_TRUE(WaitFor([&] { return Sample(Metrics(), kHealed) == 1; }, 10s)) << Metrics();
  EXPECT_TRUE(std::isnan(Sample(Metrics(), kSince)));
  EXPECT_EQ(Sample(Metrics(), kLasted), 1);
  api = HttpGet(port_, "/api/invariants");
  EXPECT_NE(api.body.find("\"healed\":[{\"invariant\":\"sold_seat_without_ticket\",\"check\":"
                          "\"booking_reconciliation\",\"labels\":{\"event_id\":\"2\"}"),
            std::string::npos)
      << api.body;

  Break();
  ASSERT_TRUE(WaitFor([&] { return Sample(Metrics(), kDetected) == 2; }, 10s)) << Metrics();
  EXPECT_GT(Sample(Metrics(), kSince), first_since + 2);
  Heal();
  ASSERT_TRUE(WaitFor([&] { return Sample(Metrics(), kHealed) == 2; }, 10s)) << Metrics();
  EXPECT_EQ(Sample(Metrics(), kLasted), 2);
  api = HttpGet(port_, "/api/invariants");
  size_t first = api.body.find("\"labels\":{\"event_id\":\"2\"},\"since_timestamp_seconds\"");
  ASSERT_NE(first, std::string::npos) << api.body;
  EXPECT_NE(api.body.find("\"labels\":{\"event_id\":\"2\"},\"since_timestamp_seconds\"", first + 1),
            std::string::npos)
      << "both lifecycles listed: " << api.body;
  // Other invariants saw nothing.
  EXPECT_EQ(Sample(Metrics(),
                   "seatwatch_invariant_violations_detected_total{check=\"booking_reconciliation\","
                   "invariant=\"ticket_without_sold_seat\"}"),
            0);
  EXPECT_EQ(daemon.Stop(), 0) << daemon.Log();
}

}  // namespace
}  // namespace seatwatch
