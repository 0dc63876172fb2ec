// The change feed's coverage against the real scratch PostgreSQL: what its
// publication sends of the watched tables is verified when a slot is made,
// and any change of it afterwards (a table dropped from the publication, an
// action no longer published, a table renamed away and back, a table dropped
// and added back between two drains) is seen by the next drain: the slot
// goes (resync coverage), the feed stays down while coverage is not whole
// (full passes), and a new slot follows once it is whole again.
#include "changes/change_feed.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <pqxx/connection>
#include <pqxx/nontransaction>
#include <pqxx/transaction>

#include "changes/changes_metrics.h"
#include "support/change_feed_fixtures.h"
#include "support/incremental_daemon.h"
#include "support/scratch_db.h"
#include "support/test_env.h"

namespace seatwatch::changes {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::BookingTables;
using testing::KeysOf;
using testing::ScratchDatabase;

constexpr const char* kDb = "sw_feed_coverage";

class ChangeFeedCoverageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = std::make_unique<ScratchDatabase>(kDb);
    testing::RunChangesSetup(*db_);
    db_->Exec("INSERT INTO seats (event_id, seat) SELECT e, 's' || s "
              "FROM generate_series(1, 9) e, generate_series(1, 20) s");
    db_->Exec("INSERT INTO tickets (event_id, seat, fan) SELECT e, 's1', 'f' "
              "FROM generate_series(1, 9) e");
  }

  ChangeFeedOptions Options(const std::string& prefix) const {
    return testing::BookingFeedOptions(db_->changes_dsn(), prefix);
  }

  // Commits `sql` on a writer whose commit is flushed when COMMIT returns.
  void Commit(const std::string& sql) const {
    auto connection = db_->Connect();
    pqxx::nontransaction(*connection).exec0("SET synchronous_commit = on");
    pqxx::work tx(*connection);
    tx.exec(sql);
    tx.commit();
  }

  std::size_t SlotCount(const std::string& prefix) const {
    pqxx::connection connection(testing::ScratchDsn("postgres"));
    pqxx::nontransaction tx(connection);
    return tx.exec_params1("SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE $1",
                           prefix + "\\_%")[0]
        .as<std::size_t>();
  }

  // Drains until the feed is up again (the creation backoff is at most 1 s
  // here), at most 15 s.
  ChangeBatch DrainUntilUp(ChangeFeed& feed) const {
    ChangeBatch batch = feed.Drain();
    for (auto deadline = Clock::now() + 15s; !batch.feed_up && Clock::now() < deadline;) {
      std::this_thread::sleep_for(200ms);
      batch = feed.Drain();
    }
    return batch;
  }

  std::unique_ptr<ScratchDatabase> db_;
};

bool Has(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

const char* const kCoverageResyncs = "seatwatch_changes_resyncs_total{reason=\"coverage\"}";

TEST_F(ChangeFeedCoverageTest, ATableDroppedFromThePublicationIsSeenOnTheNextDrain) {
  ChangeFeed feed(Options("sw_cov_drop"));
  ASSERT_TRUE(feed.Drain().feed_up) << feed.off_reason();
  db_->Exec("ALTER PUBLICATION seatwatch DROP TABLE tickets");
  Commit("DELETE FROM tickets WHERE event_id = 4");
  ChangeBatch batch = feed.Drain();
  // Blind to tickets now: no slot, full passes, and why.
  EXPECT_FALSE(batch.feed_up);
  EXPECT_NE(batch.coverage_lost.find("public.tickets"), std::string::npos)
      << batch.coverage_lost;
  std::string text = feed.RenderMetrics();
  EXPECT_TRUE(Has(text, std::string(kCoverageResyncs) + " 1")) << text;
  EXPECT_TRUE(Has(text, "seatwatch_changes_up 0")) << text;
  EXPECT_NE(feed.off_reason().find("public.tickets is not in publication seatwatch"),
            std::string::npos)
      << feed.off_reason();
  EXPECT_EQ(SlotCount("sw_cov_drop"), 0u);
  // Still not whole: still down, counted once.
  std::this_thread::sleep_for(1200ms);
  batch = feed.Drain();
  EXPECT_FALSE(batch.feed_up);
  EXPECT_FALSE(batch.coverage_lost.empty());
  EXPECT_TRUE(Has(feed.RenderMetrics(), std::string(kCoverageResyncs) + " 1"));

  // Whole again: a new slot, its generation made for coverage.
  db_->Exec("ALTER PUBLICATION seatwatch ADD TABLE tickets (event_id, seat)");
  batch = DrainUntilUp(feed);
  ASSERT_TRUE(batch.feed_up) << feed.off_reason();
  EXPECT_EQ(batch.generation, 2u);
  EXPECT_TRUE(batch.coverage_lost.empty());
  EXPECT_EQ(std::string(ResyncLabel(feed.generation_reason())), "coverage");
  EXPECT_EQ(SlotCount("sw_cov_drop"), 1u);
  Commit("DELETE FROM tickets WHERE event_id = 5");
  EXPECT_EQ(KeysOf(feed.Drain(), "tickets"), std::set<std::string>{"5"});
  EXPECT_TRUE(Has(feed.RenderMetrics(), std::string(kCoverageResyncs) + " 1"));
}

TEST_F(ChangeFeedCoverageTest, AnActionNoLongerPublishedIsSeenOnTheNextDrain) {
  ChangeFeed feed(Options("sw_cov_publish"));
  ASSERT_TRUE(feed.Drain().feed_up) << feed.off_reason();
  db_->Exec("ALTER PUBLICATION seatwatch SET (publish = 'insert, update')");
  Commit("DELETE FROM tickets WHERE event_id = 4");
  ChangeBatch batch = feed.Drain();
  EXPECT_FALSE(batch.feed_up);
  EXPECT_NE(batch.coverage_lost.find("delete"), std::string::npos) << batch.coverage_lost;
  EXPECT_TRUE(Has(feed.RenderMetrics(), std::string(kCoverageResyncs) + " 1"))
      << feed.RenderMetrics();
  EXPECT_NE(feed.off_reason().find("does not publish deletes"), std::string::npos)
      << feed.off_reason();
  EXPECT_EQ(SlotCount("sw_cov_publish"), 0u);
  db_->Exec("ALTER PUBLICATION seatwatch SET (publish = 'insert, update, delete, truncate')");
  batch = DrainUntilUp(feed);
  ASSERT_TRUE(batch.feed_up) << feed.off_reason();
  EXPECT_EQ(batch.generation, 2u);
  EXPECT_EQ(std::string(ResyncLabel(feed.generation_reason())), "coverage");
}

// Altered and altered back between two drains: the catalog looks as it did,
// but what was decoded in between was not under the verified coverage.
TEST_F(ChangeFeedCoverageTest, ATableDroppedAndAddedBackBetweenDrainsIsSeen) {
  ChangeFeed feed(Options("sw_cov_readd"));
  ASSERT_TRUE(feed.Drain().feed_up) << feed.off_reason();
  db_->Exec("ALTER PUBLICATION seatwatch DROP TABLE tickets");
  Commit("DELETE FROM tickets WHERE event_id = 4");  // never sent
  db_->Exec("ALTER PUBLICATION seatwatch ADD TABLE tickets (event_id, seat)");
  ChangeBatch batch = feed.Drain();
  // Whole again already: the next slot at once, a new generation (whose
  // seeding full pass sees the delete).
  EXPECT_TRUE(batch.feed_up) << feed.off_reason();
  EXPECT_EQ(batch.generation, 2u);
  EXPECT_EQ(std::string(ResyncLabel(feed.generation_reason())), "coverage");
  EXPECT_TRUE(Has(feed.RenderMetrics(), std::string(kCoverageResyncs) + " 1"))
      << feed.RenderMetrics();
  EXPECT_EQ(SlotCount("sw_cov_readd"), 1u);
}

TEST_F(ChangeFeedCoverageTest, ATableRenamedAwayAndBackWithChangesInBetweenIsSeen) {
  ChangeFeed feed(Options("sw_cov_rename"));
  ASSERT_TRUE(feed.Drain().feed_up) << feed.off_reason();
  db_->Exec("ALTER TABLE tickets RENAME TO tickets_away");
  Commit("DELETE FROM tickets_away WHERE event_id = 4");  // decoded as tickets_away
  db_->Exec("ALTER TABLE tickets_away RENAME TO tickets");
  ChangeBatch batch = feed.Drain();
  EXPECT_TRUE(batch.feed_up) << feed.off_reason();
  EXPECT_EQ(batch.generation, 2u);
  EXPECT_EQ(std::string(ResyncLabel(feed.generation_reason())), "coverage");
  EXPECT_TRUE(Has(feed.RenderMetrics(), std::string(kCoverageResyncs) + " 1"))
      << feed.RenderMetrics();

  // Renamed away across a drain: down while it is away, back when it is back.
  db_->Exec("ALTER TABLE tickets RENAME TO tickets_away");
  batch = feed.Drain();
  EXPECT_FALSE(batch.feed_up);
  EXPECT_NE(batch.coverage_lost.find("tickets"), std::string::npos) << batch.coverage_lost;
  EXPECT_TRUE(Has(feed.RenderMetrics(), std::string(kCoverageResyncs) + " 2"));
  db_->Exec("ALTER TABLE tickets_away RENAME TO tickets");
  batch = DrainUntilUp(feed);
  ASSERT_TRUE(batch.feed_up) << feed.off_reason();
  EXPECT_EQ(batch.generation, 3u);
  Commit("DELETE FROM tickets WHERE event_id = 6");
  EXPECT_EQ(KeysOf(feed.Drain(), "tickets"), std::set<std::string>{"6"});
}

// A watched name that is another relation than the one verified (dropped
// and made anew): its OID is not the one the feed resolved.
TEST_F(ChangeFeedCoverageTest, AWatchedTableMadeAnewIsSeen) {
  ChangeFeed feed(Options("sw_cov_anew"));
  ASSERT_TRUE(feed.Drain().feed_up) << feed.off_reason();
  db_->Exec("ALTER PUBLICATION seatwatch DROP TABLE seats");
  db_->Exec("ALTER TABLE seats RENAME TO seats_old");
  db_->Exec("CREATE TABLE seats (LIKE seats_old INCLUDING ALL)");
  db_->Exec("ALTER PUBLICATION seatwatch ADD TABLE seats (event_id, seat)");
  Commit("INSERT INTO seats (event_id, seat) VALUES (3, 'new')");
  ChangeBatch batch = feed.Drain();
  EXPECT_TRUE(batch.feed_up) << feed.off_reason();
  EXPECT_EQ(batch.generation, 2u);
  EXPECT_EQ(std::string(ResyncLabel(feed.generation_reason())), "coverage");
  EXPECT_TRUE(Has(feed.RenderMetrics(), std::string(kCoverageResyncs) + " 1"))
      << feed.RenderMetrics();
  Commit("INSERT INTO seats (event_id, seat) VALUES (7, 'new')");
  EXPECT_EQ(KeysOf(feed.Drain(), "seats"), std::set<std::string>{"7"});
}

}  // namespace
}  // namespace seatwatch::changes
