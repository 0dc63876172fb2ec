// The change feed against a streaming standby of the scratch cluster:
// PostgreSQL 15 decodes changes only on a primary, so on the standby the
// feed is off with the standby reason (said once, no slot tried), inspects
// again on later drains with its backoff, and comes up by itself once the
// standby is promoted (a temporary slot on the promoted server). Through a
// failover (a multi-host DSN with target_session_attrs = read-write, the
// feed's backend on the old server gone) it makes a new slot on the
// promoted server: a new generation, counted as a resync. And the daemon
// whose [changes] dsn reaches a standby runs its incremental checks as full
// passes until the promotion.
#include "changes/change_feed.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include <pqxx/connection>
#include <pqxx/nontransaction>
#include <pqxx/transaction>

#include "changes/feed_verdict.h"
#include "changes/publication_inspector.h"
#include "config/config.h"
#include "support/daemon_process.h"
#include "support/log_capture.h"
#include "support/incremental_daemon.h"
#include "support/change_feed_fixtures.h"
#include "support/scratch_db.h"
#include "support/standby.h"
#include "support/test_env.h"

namespace seatwatch::changes {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::BookingTables;
using testing::IncrementalConfig;
using testing::ScratchDatabase;
using testing::ScratchStandby;

constexpr const char* kReason =
    "the server is a standby (in recovery): PostgreSQL 15 decodes changes only on the primary; "
    "point [changes] dsn (or [database] dsn) at the primary";

using testing::LogCapture;

size_t Count(const std::string& text, const std::string& part) {
  return testing::CountOccurrences(text, part);
}

std::set<std::string> SeatKeys(const ChangeBatch& batch) { return testing::KeysOf(batch, "seats"); }

std::string PrimaryPort() {
  std::string port = testing::ReadFile(testing::ScratchPgDir() + "/port");
  while (!port.empty() && port.back() == '\n') port.pop_back();
  return port;
}

// The booking schema with the DBA's changes setup, some seats, and the
// changes role (cluster-wide: the standby has it once it has replayed).
class StandbyChangeFeedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = std::make_unique<ScratchDatabase>("sw_standby_feed");
    testing::RunChangesSetup(*db_);
    db_->Exec("INSERT INTO seats (event_id, seat) SELECT e, 's' || s "
              "FROM generate_series(1, 9) e, generate_series(1, 20) s");
    testing::ScratchChangesDsn(db_->name());
    standby_ = std::make_unique<ScratchStandby>();
    standby_->WaitReplayed();
  }

  ChangeFeedOptions Options(const std::string& dsn, const std::string& prefix) const {
    return testing::BookingFeedOptions(dsn, prefix, 500ms);
  }

  std::string StandbyDsn() const {
    return standby_->Dsn(db_->name(), testing::kChangesRole);
  }

  // The slots with this prefix on a server, as "name:temporary:active_pid".
  static std::string Slots(const std::string& dsn, const std::string& prefix) {
    pqxx::connection connection(dsn);
    pqxx::nontransaction tx(connection);
    auto row = tx.exec_params1(
        "SELECT coalesce(string_agg(slot_name || ':' || temporary || ':' || "
        "coalesce(active_pid, 0), ',' ORDER BY slot_name), '') "
        "FROM pg_replication_slots WHERE slot_name LIKE $1 || '\\_%'",
        prefix);
    return row[0].c_str();
  }

  // Commits `sql` on the promoted server, flushed when COMMIT returns.
  void CommitOnPromoted(const std::string& sql) const {
    pqxx::connection connection(standby_->Dsn(db_->name()));
    pqxx::work tx(connection);
    tx.exec0("SET LOCAL synchronous_commit = on");
    tx.exec(sql);
    tx.commit();
  }

  std::unique_ptr<ScratchDatabase> db_;
  std::unique_ptr<ScratchStandby> standby_;
};

TEST_F(StandbyChangeFeedTest, OffOnAStandbyThenUpByItselfAfterThePromotion) {
  // What --check-config says, from the standby itself.
  EXPECT_EQ(CheckFeed(IncrementalConfig(StandbyDsn())), std::string("incremental mode: off: ") +
                                                            kReason);
  auto capture = std::make_unique<LogCapture>();
  ChangeFeed feed(Options(StandbyDsn(), "sw_standby"));
  // Drains for about two seconds, every 100 ms: off each time, never a slot.
  for (auto end = Clock::now() + 2s; Clock::now() < end;) {
    ChangeBatch batch = feed.Drain();
    ASSERT_FALSE(batch.feed_up);
    ASSERT_EQ(feed.off_reason(), kReason);
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_EQ(feed.generation(), 0u);
  EXPECT_NE(feed.RenderMetrics().find("\nseatwatch_changes_up 0\n"), std::string::npos)
      << feed.RenderMetrics();
  EXPECT_EQ(Slots(standby_->Dsn("postgres"), "sw_standby"), "");
  EXPECT_EQ(Slots(testing::ScratchDsn("postgres"), "sw_standby"), "");
  {
    std::string log = capture->Text();
    EXPECT_EQ(Count(log, std::string("msg=\"incremental mode: off: ") + kReason + "\""), 1u)
        << log;
    EXPECT_EQ(Count(log, "cannot create the replication slot"), 0u) << log;
  }

  auto promoted = Clock::now();
  standby_->Promote();
  // The next inspection after the backoff (capped at 500 ms here) finds a
  // primary: a slot on the promoted server, the first generation.
  ChangeBatch batch;
  ASSERT_TRUE(testing::WaitFor([&] {
    batch = feed.Drain();
    return batch.feed_up;
  }, 10s)) << feed.off_reason();
  double took = std::chrono::duration<double>(Clock::now() - promoted).count();
  EXPECT_EQ(batch.generation, 1u);
  EXPECT_EQ(feed.off_reason(), "");
  EXPECT_EQ(feed.stats().resyncs_of(ResyncReason::kStartup), 1u);
  EXPECT_EQ(Slots(standby_->Dsn("postgres"), "sw_standby"),
            feed.slot_name() + ":true:" + std::to_string(feed.backend_pid()));
  EXPECT_EQ(Slots(testing::ScratchDsn("postgres"), "sw_standby"), "");
  CommitOnPromoted("UPDATE seats SET version = version + 1 WHERE event_id = 3");
  EXPECT_EQ(SeatKeys(feed.Drain()), std::set<std::string>{"3"});
  EXPECT_NE(feed.RenderMetrics().find("\nseatwatch_changes_up 1\n"), std::string::npos);

  std::string log = capture->Text();
  capture.reset();
  std::cerr << "promotion to the feed up on the promoted server: " << took << " s\n";
  EXPECT_EQ(Count(log, std::string("msg=\"incremental mode: off: ") + kReason + "\""), 1u)
      << log;
  EXPECT_EQ(Count(log, "msg=\"incremental mode: on\""), 1u) << log;
  EXPECT_EQ(Count(log, "msg=\"change feed: replication slot created\""), 1u) << log;
  EXPECT_EQ(Count(log, "cannot create the replication slot"), 0u) << log;
}

TEST_F(StandbyChangeFeedTest, AfterAFailoverANewSlotOnThePromotedServerAndANewGeneration) {
  // The standby first, the primary second: libpq skips the standby while it
  // is in recovery, and reaches it first once it accepts writes.
  std::string dsn = "host=" + standby_->dir() + "/sock," + testing::ScratchPgDir() +
                    "/sock port=" + std::to_string(standby_->port()) + "," + PrimaryPort() +
                    " user=" + testing::kChangesRole + " dbname=" + db_->name() +
                    " target_session_attrs=read-write";
  ChangeFeed feed(Options(dsn, "sw_failover"));
  ChangeBatch first = feed.Drain();
  ASSERT_TRUE(first.feed_up) << feed.off_reason();
  EXPECT_EQ(first.generation, 1u);
  int old_pid = feed.backend_pid();
  EXPECT_EQ(Slots(testing::ScratchDsn("postgres"), "sw_failover"),
            feed.slot_name() + ":true:" + std::to_string(old_pid));

  standby_->Promote();
  // The old primary goes away for the feed: its backend, and the temporary
  // slot with it.
  db_->Exec("SELECT pg_terminate_backend(" + std::to_string(old_pid) + ")");
  ASSERT_TRUE(testing::WaitFor(
      [&] { return Slots(testing::ScratchDsn("postgres"), "sw_failover").empty(); }, 10s));

  ChangeBatch batch;
  ASSERT_TRUE(testing::WaitFor([&] {
    batch = feed.Drain();
    return batch.feed_up;
  }, 10s)) << feed.off_reason();
  // A new generation: the incremental checks run a full pass first.
  EXPECT_EQ(batch.generation, 2u);
  EXPECT_EQ(feed.generation_reason(), ResyncReason::kSlotLost);
  FeedStats stats = feed.stats();
  EXPECT_EQ(stats.resyncs_of(ResyncReason::kSlotLost), 1u);
  EXPECT_EQ(stats.resyncs_of(ResyncReason::kStartup), 1u);
  EXPECT_EQ(Slots(standby_->Dsn("postgres"), "sw_failover"),
            feed.slot_name() + ":true:" + std::to_string(feed.backend_pid()));
  EXPECT_EQ(Slots(testing::ScratchDsn("postgres"), "sw_failover"), "");
  CommitOnPromoted("UPDATE seats SET version = version + 1 WHERE event_id = 7");
  EXPECT_EQ(SeatKeys(feed.Drain()), std::set<std::string>{"7"});
  std::string text = feed.RenderMetrics();
  EXPECT_NE(text.find("seatwatch_changes_resyncs_total{reason=\"slot_lost\"} 1\n"),
            std::string::npos)
      << text;
}

std::string Mode(const std::string& check, const std::string& mode) {
  return "seatwatch_check_mode{check=\"" + check + "\",mode=\"" + mode + "\"}";
}

// The built daemon with the booking pack on the primary and its [changes]
// dsn on the standby: full passes, the reason in the log once; after the
// promotion the feed comes up there by itself (no restart).
TEST_F(StandbyChangeFeedTest, TheDaemonRunsFullPassesWhileTheFeedReachesAStandby) {
  testing::IncrementalDaemon daemon(*db_, "enabled = true\ninterval = \"1s\"\n", StandbyDsn());
  std::string text;
  ASSERT_TRUE(testing::WaitFor([&] {
    text = daemon.Metrics();
    return testing::Sample(text, "seatwatch_check_success{check=\"booking_reconciliation\"}") ==
           1;
  }, 30s)) << text << daemon.process().Log();
  std::this_thread::sleep_for(2500ms);  // a few polls: it stays off
  text = daemon.Metrics();
  EXPECT_EQ(testing::Sample(text, "seatwatch_changes_up"), 0) << text;
  for (const char* check : {"booking_reconciliation", "event_inventory"}) {
    EXPECT_EQ(testing::Sample(text, Mode(check, "full")), 1) << check << "\n" << text;
    EXPECT_EQ(testing::Sample(text, Mode(check, "incremental")), 0) << check;
  }
  EXPECT_GT(testing::Sample(text, "seatwatch_full_passes_total{check=\"booking_reconciliation\","
                                  "reason=\"feed_down\"}"),
            0)
      << text;
  std::string log = daemon.process().Log();
  EXPECT_EQ(Count(log, std::string("msg=\"incremental mode: off: ") + kReason + "\""), 1u)
      << log;
  EXPECT_EQ(Count(log, "cannot create the replication slot"), 0u) << log;
  EXPECT_EQ(Slots(standby_->Dsn("postgres"), "seatwatch"), "");

  standby_->Promote();
  ASSERT_TRUE(testing::WaitFor([&] {
    text = daemon.Metrics();
    return testing::Sample(text, "seatwatch_changes_up") == 1;
  }, 30s)) << text << daemon.process().Log();
  EXPECT_NE(Slots(standby_->Dsn("postgres"), "seatwatch"), "");
  log = daemon.process().Log();
  EXPECT_EQ(Count(log, std::string("msg=\"incremental mode: off: ") + kReason + "\""), 1u)
      << log;
  EXPECT_NE(log.find("msg=\"change feed: replication slot created\""), std::string::npos) << log;
}

}  // namespace
}  // namespace seatwatch::changes
