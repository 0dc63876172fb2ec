// The checks lane on a streaming standby of the scratch cluster: it says it
// reads a standby, has no change feed there (its incremental checks run full
// passes), and after the standby's promotion reads a primary on a new
// timeline, makes a feed again and counts the failover.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "checks/registry.h"
#include "metrics/snapshot.h"
#include "poll/poller.h"
#include "poll/state_publisher.h"
#include "support/scratch_db.h"
#include "support/standby.h"
#include "support/test_config.h"

namespace seatwatch {
namespace {

using testing::ScratchDatabase;

// What a feed was asked for: made, drained, gone.
struct FeedLog {
  int made = 0;
  int drains = 0;
  int alive = 0;
};

// A feed that is always up with nothing to report: only whether the poller
// makes it, drains it and drops it matters here.
class CountingFeed : public changes::ChangeSource {
 public:
  explicit CountingFeed(FeedLog& log) : log_(log) {
    ++log_.made;
    ++log_.alive;
  }
  ~CountingFeed() override { --log_.alive; }
  changes::ChangeBatch Drain() override {
    ++log_.drains;
    changes::ChangeBatch batch;
    batch.feed_up = true;
    batch.generation = static_cast<std::uint64_t>(log_.made);
    return batch;
  }
  std::string RenderMetrics() const override { return ""; }
  void NoteFullPassCost(double) override {}
  std::shared_ptr<pqxx::connection> shared_connection() const override { return nullptr; }
  void Abort() override {}
  changes::ResyncReason generation_reason() const override {
    return changes::ResyncReason::kStartup;
  }
  std::string off_reason() const override { return ""; }

 private:
  FeedLog& log_;
};

// The booking reconciliation as an incremental entry (as the incremental
// tests configure it), on [changes] so that the poller wants a feed.
std::string Toml() {
  return "[locks]\nenabled = false\n[holds]\nenabled = false\n[changes]\nenabled = true\n"
         "[[invariant]]\nname = \"booking_reconciliation\"\n"
         "sql = \"queries/booking/reconciliation.sql\"\ninvariant_column = \"invariant\"\n"
         "invariants = [\"sold_seat_without_ticket\", \"ticket_without_sold_seat\", "
         "\"confirmed_payment_without_ticket\", \"ticket_without_confirmed_payment\", "
         "\"double_confirmed_payment\", \"fan_over_limit\"]\n"
         "labels = [\"event_id\"]\nvalue = \"violations\"\nparams = [4]\n"
         "key = \"event_id\"\n"
         "tables = { seats = \"event_id\", tickets = \"event_id\", payments = \"event_id\" }\n"
         "scoped_sql = \"queries/booking/reconciliation.scoped.sql\"\n"
         "expiry_column = \"next_expiry_unix\"\n";
}

TEST(StandbyLaneTest, ChecksLaneOnAStandbyThenThroughItsPromotion) {
  ScratchDatabase db("sw_standby_lane");
  db.Exec("INSERT INTO seats (event_id, seat) VALUES (1, 'A1')");
  testing::ScratchStandby standby;
  standby.WaitReplayed();
  config::Config config = testing::ConfigFromToml(Toml(), db.dsn());
  config.checks.dsn = standby.Dsn(db.name());
  FeedLog feed;
  metrics::SnapshotStore store;
  poll::StatePublisher publisher(store, 1);
  poll::Poller poller(config, checks::BuildChecks(config), store, "test");
  poller.SetChangeFeedFactory(
      [&feed](const config::Config&) { return std::make_unique<CountingFeed>(feed); });
  ASSERT_EQ(feed.made, 1) << "made before the lane knows where it reads";

  ::testing::internal::CaptureStderr();
  metrics::PollState state = poller.RunAllOnce();
  metrics::PollState again = poller.RunAllOnce();
  std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_EQ(state.servers.size(), 1u) << log;
  EXPECT_EQ(state.servers[0].lane, "checks");
  EXPECT_TRUE(state.servers[0].facts.in_recovery);
  EXPECT_EQ(state.servers[0].facts.replica_lag_seconds, 0) << "caught up, nothing to replay";
  EXPECT_EQ(state.servers[0].facts.timeline, 1u);
  EXPECT_EQ(state.servers[0].facts.system_identifier,
            db.Scalar("SELECT system_identifier FROM pg_control_system()"));
  EXPECT_EQ(feed.alive, 0) << "dropped on the standby";
  EXPECT_EQ(feed.made, 1) << "and not made again while it reads one";
  EXPECT_EQ(feed.drains, 0);
  for (const auto* poll : {&state, &again}) {
    ASSERT_EQ(poll->checks.size(), 1u);
    const auto& check = poll->checks[0];
    EXPECT_TRUE(check.success) << check.last_error;
    ASSERT_TRUE(check.incremental.has_value());
    EXPECT_EQ(check.incremental->mode, "full");
  }
  auto once = [&log](const std::string& text) {
    std::size_t at = log.find(text);
    return at != std::string::npos && log.find(text, at + 1) == std::string::npos;
  };
  EXPECT_TRUE(once("msg=\"lane reads a standby (in recovery)\" lane=checks")) << log;
  EXPECT_TRUE(once("level=warn msg=\"checks lane reads a standby: incremental checks run full "
                   "passes (the change feed needs the primary)\""))
      << log;
  publisher.Publish(0, state);

  standby.Promote();
  ::testing::internal::CaptureStderr();
  metrics::PollState promoted = poller.RunAllOnce();
  log = ::testing::internal::GetCapturedStderr();
  ASSERT_EQ(promoted.servers.size(), 1u) << log;
  EXPECT_FALSE(promoted.servers[0].facts.in_recovery);
  EXPECT_EQ(promoted.servers[0].facts.timeline, 2u);
  EXPECT_EQ(promoted.servers[0].facts.system_identifier, state.servers[0].facts.system_identifier);
  EXPECT_EQ(feed.made, 2) << "a new feed on the promoted server";
  EXPECT_EQ(feed.alive, 1);
  EXPECT_EQ(feed.drains, 1);
  EXPECT_TRUE(once("msg=\"lane reads a primary now\" lane=checks")) << log;
  publisher.Publish(0, promoted);
  EXPECT_EQ(store.Current()->state->failovers_total, 1u);
  EXPECT_NE(store.Current()->MetricsText().find("seatwatch_database_failovers_total 1\n"),
            std::string::npos);
  EXPECT_NE(store.Current()->MetricsText().find("seatwatch_database_timeline{lane=\"checks\"} 2\n"),
            std::string::npos);
}

}  // namespace
}  // namespace seatwatch
