// Incremental checks against a real database and a real logical replication
// slot: after a random workload the incremental result equals a full pass
// on the same data, row for row; an injected violation shows with its key
// after one cycle and its repair clears it; a hold's expiry moves its seat
// from seats_held to seats_held_expired with no write at all.
//
// The feed here is a small ChangeSource of the test's own on a temporary
// slot with test_decoding (text output, the xid on every row), so these
// tests prove the cycle (drain, visibility, recheck, merge) independently of
// the pgoutput feed, which has its own suite.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <random>
#include <regex>
#include <sstream>
#include <thread>

#include <pqxx/nontransaction>
#include <pqxx/result>

#include "changes/change_feed.h"
#include "changes/change_source.h"
#include "checks/registry.h"
#include "metrics/snapshot.h"
#include "poll/poller.h"
#include "support/daemon_process.h"
#include "support/incremental_daemon.h"
#include "support/scratch_db.h"
#include "support/test_config.h"
#include "support/test_env.h"

namespace seatwatch {
namespace {

using testing::ScratchDatabase;
using namespace std::chrono_literals;

// A temporary test_decoding slot on a connection of its own, drained like
// the real feed: committed transactions in commit order, each with the
// event_id values (old and new) of the watched tables it changed, and how
// far the slot has read (confirmed_flush_lsn). SkipNextTransaction() is the
// test hook of a feed that misses a change.
class TestDecodingFeed : public changes::ChangeSource {
 public:
  explicit TestDecodingFeed(std::string dsn) : dsn_(std::move(dsn)) {}

  // The next transaction decoded is not handed over.
  void SkipNextTransaction() { skip_next_ = true; }
  std::size_t skipped() const { return skipped_; }

  changes::ChangeBatch Drain() override {
    changes::ChangeBatch batch;
    try {
      if (!connection_) Create();
      pqxx::nontransaction tx(*connection_);
      auto result = tx.exec(
          "SELECT xid::text, data FROM pg_logical_slot_get_changes('" + slot_ +
          "', NULL, NULL, 'include-xids', '1', 'skip-empty-xacts', '1')");
      static const std::regex kTable(R"(^table (?:[a-z_]+\.)?([a-z_]+): )");
      static const std::regex kKey(R"(event_id\[integer\]:(-?\d+))");
      for (const auto& row : result) {
        std::uint32_t xid = static_cast<std::uint32_t>(std::stoul(row[0].c_str()));
        std::string data = row[1].c_str();
        if (data.rfind("BEGIN", 0) == 0) {
          batch.transactions.push_back({});
          batch.transactions.back().xid = xid;
          continue;
        }
        std::smatch m;
        if (batch.transactions.empty() || !std::regex_search(data, m, kTable)) continue;
        std::string table = m[1];
        auto& keys = batch.transactions.back().keys[table];
        for (std::sregex_iterator it(data.begin(), data.end(), kKey), end; it != end; ++it) {
          keys.insert((*it)[1]);
        }
      }
      if (skip_next_ && !batch.transactions.empty()) {
        batch.transactions.erase(batch.transactions.begin());
        skip_next_ = false;
        ++skipped_;
      }
      auto position = tx.exec(
          "SELECT (confirmed_flush_lsn - '0/0'::pg_lsn)::bigint FROM pg_replication_slots "
          "WHERE slot_name = '" + slot_ + "'");
      batch.complete_through_lsn = position.at(0).at(0).as<std::uint64_t>();
      batch.feed_up = true;
      batch.generation = generation_;
      batch.creation_xids = creation_xids_;
      transactions_ += batch.transactions.size();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "drain failed: " << e.what();
      connection_.reset();
    }
    return batch;
  }
  std::string RenderMetrics() const override {
    return "# HELP seatwatch_changes_up test feed\n# TYPE seatwatch_changes_up gauge\n"
           "seatwatch_changes_up " + std::string(connection_ ? "1" : "0") + "\n";
  }
  void NoteFullPassCost(double seconds) override { full_pass_cost_ = seconds; }
  std::shared_ptr<pqxx::connection> shared_connection() const override { return connection_; }
  void Abort() override {}
  changes::ResyncReason generation_reason() const override {
    return changes::ResyncReason::kStartup;
  }
  std::string off_reason() const override { return ""; }

  std::size_t transactions() const { return transactions_; }
  double full_pass_cost() const { return full_pass_cost_; }

 private:
  void Create() {
    connection_ = std::make_shared<pqxx::connection>(dsn_);
    pqxx::nontransaction tx(*connection_);
    slot_ = "sw_incremental_test_" + std::to_string(++generation_);
    tx.exec("SELECT pg_create_logical_replication_slot('" + slot_ +
            "', 'test_decoding', temporary => true)");
    creation_xids_.clear();
    for (const auto& row : tx.exec("SELECT x::text FROM pg_snapshot_xip(pg_current_snapshot()) AS x")) {
      creation_xids_.push_back(std::stoull(row[0].c_str()));
    }
  }

  std::string dsn_;
  std::shared_ptr<pqxx::connection> connection_;
  std::string slot_;
  std::uint64_t generation_ = 0;
  std::vector<std::uint64_t> creation_xids_;
  std::size_t transactions_ = 0;
  double full_pass_cost_ = 0;
  bool skip_next_ = false;
  std::size_t skipped_ = 0;
};

std::string Toml(bool incremental) {
  std::string keys =
      "key = \"event_id\"\n"
      "tables = { seats = \"event_id\", tickets = \"event_id\", payments = \"event_id\" }\n"
      "scoped_sql = \"queries/booking/reconciliation.scoped.sql\"\n"
      "expiry_column = \"next_expiry_unix\"\n";
  if (!incremental) keys.clear();
  return std::string("[locks]\nenabled = false\n[changes]\nenabled = ") +
         (incremental ? "true" : "false") +
         "\n[[invariant]]\nname = \"booking_reconciliation\"\n"
         "sql = \"queries/booking/reconciliation.sql\"\ninvariant_column = \"invariant\"\n"
         "invariants = [\"sold_seat_without_ticket\", \"ticket_without_sold_seat\", "
         "\"confirmed_payment_without_ticket\", \"ticket_without_confirmed_payment\", "
         "\"double_confirmed_payment\", \"fan_over_limit\"]\n"
         "labels = [\"event_id\"]\nvalue = \"violations\"\nparams = [4]\n" +
         keys +
         "[[metric]]\nname = \"event_inventory\"\nsql = \"queries/booking/reconciliation.sql\"\n"
         "labels = [\"event_id\", \"kind\"]\nvalue = \"count\"\nparams = [4]\n" + keys;
}

const metrics::CheckStatus& Find(const metrics::PollState& state, const std::string& name) {
  for (const auto& check : state.checks) {
    if (check.name == name) return check;
  }
  throw std::runtime_error("no check " + name);
}

// What a poll says: every violation row and every inventory series, sorted.
std::vector<std::string> Verdict(const metrics::PollState& state) {
  std::vector<std::string> lines;
  for (const auto& check : state.checks) {
    EXPECT_TRUE(check.success) << check.name << ": " << check.last_error;
    if (!check.output) continue;
    for (const auto& invariant : check.output->invariants) {
      for (const auto& v : invariant.violations) {
        std::string line = invariant.name;
        for (const auto& label : v.labels) line += " " + label.name + "=" + label.value;
        lines.push_back(line + " " + std::to_string(v.value));
      }
    }
    std::istringstream text(check.rendered ? check.rendered->Text() : "");
    std::string line;
    while (std::getline(text, line)) {
      if (!line.empty() && line[0] != '#') lines.push_back(line);
    }
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

// A family's text as its comment lines (in order) and its samples (sorted).
std::pair<std::vector<std::string>, std::vector<std::string>> Exposition(const std::string& text) {
  std::pair<std::vector<std::string>, std::vector<std::string>> out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) (line.rfind("#", 0) == 0 ? out.first : out.second).push_back(line);
  std::sort(out.second.begin(), out.second.end());
  return out;
}

// Which feed a test runs with: the test's own test_decoding slot, or the
// daemon's ChangeFeed (pgoutput, the shipped setup script's publication).
enum class Feed { kTestDecoding, kChangeFeed };

class IncrementalCheckTest : public ::testing::TestWithParam<Feed> {
 protected:
  void SetUp() override {
    std::string name = std::string("sw_incr_") +
                       ::testing::UnitTest::GetInstance()->current_test_info()->name();
    name = name.substr(0, name.find('/'));
    std::transform(name.begin(), name.end(), name.begin(), ::tolower);
    name = name.substr(0, 40) + (GetParam() == Feed::kChangeFeed ? "_cf" : "_td");
    db_ = std::make_unique<ScratchDatabase>(name);
    if (GetParam() == Feed::kChangeFeed) {
      // The shipped setup script, as a DBA runs it (psql, not in a
      // transaction: it builds an index CONCURRENTLY).
      testing::RunChangesSetup(*db_);
    } else {
      // What changes-setup.sql gives tickets and payments (an old row that
      // carries event_id), the blunt way: this test owns its database.
      db_->Exec("ALTER TABLE tickets REPLICA IDENTITY FULL; "
                "ALTER TABLE payments REPLICA IDENTITY FULL");
    }
    db_->Exec("INSERT INTO seats (event_id, seat) "
              "SELECT e, 'S' || s FROM generate_series(1, 12) e, generate_series(1, 10) s");
    writer_ = db_->Connect();
    // Commits flushed before they return: the next drain decodes them (the
    // scratch cluster runs with synchronous_commit = off).
    Write("SET synchronous_commit = on");
    config_ = testing::ConfigFromToml(Toml(true), db_->dsn());
    config_.changes.dsn = db_->changes_dsn();
    config_.changes.slot_prefix = "sw_incr";
    MakePoller();
  }

  // A poller (and a feed) anew, with config_ as it is now.
  void MakePoller() {
    poller_.reset();
    test_feed_ = nullptr;
    change_feed_ = nullptr;
    std::string changes_dsn = config_.changes.dsn;
    poller_ = std::make_unique<poll::Poller>(config_, checks::BuildChecks(config_), store_, "test");
    if (GetParam() == Feed::kChangeFeed) {
      poller_->SetChangeFeedFactory([this](const config::Config& config) {
        auto feed = changes::MakeChangeFeed(config);
        change_feed_ = dynamic_cast<changes::ChangeFeed*>(feed.get());
        return feed;
      });
      ASSERT_NE(change_feed_, nullptr);
    } else {
      poller_->SetChangeFeedFactory([this, changes_dsn](const config::Config&) {
        auto feed = std::make_unique<TestDecodingFeed>(changes_dsn);
        test_feed_ = feed.get();
        return feed;
      });
      ASSERT_NE(test_feed_, nullptr);
    }
  }

  void Write(const std::string& sql) {
    pqxx::nontransaction tx(*writer_);
    tx.exec(sql);
  }

  metrics::PollState Cycle() { return poller_->RunAllOnce(); }

  // `count` claims, holds, sales, releases and a few violations at random.
  void RandomWrites(std::mt19937& random, int count) {
    std::uniform_int_distribution<int> event(1, 12);
    std::uniform_int_distribution<int> seat(1, 10);
    std::uniform_int_distribution<int> action(0, 9);
    for (int i = 0; i < count; ++i) {
      std::string e = std::to_string(event(random));
      std::string s = "'S" + std::to_string(seat(random)) + "'";
      std::string fan = "'fan" + std::to_string(seat(random) % 3) + "'";
      std::string where = " WHERE event_id = " + e + " AND seat = " + s;
      std::string key = "'p" + std::to_string(++payment_) + "'";
      switch (action(random)) {
        case 0: case 1: case 2:  // a hold, an hour long
          Write("UPDATE seats SET status = 'held', holder = " + fan +
                ", hold_expires_at = now() + interval '1 hour'" + where + " AND status = 'free'");
          break;
        case 3: case 4:  // a correct sale of a held seat
          Write("WITH s AS (UPDATE seats SET status = 'sold', hold_expires_at = NULL" + where +
                " AND status = 'held' RETURNING event_id, seat, holder), "
                "t AS (INSERT INTO tickets SELECT event_id, seat, holder FROM s) "
                "INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents, status) "
                "SELECT " + key + ", event_id, seat, holder, 5000, 'confirmed' FROM s");
          break;
        case 5:  // a release
          Write("UPDATE seats SET status = 'free', holder = NULL, hold_expires_at = NULL" +
                where + " AND status = 'held'");
          break;
        case 6:  // a sale without a ticket (a violation)
          Write("UPDATE seats SET status = 'sold', holder = " + fan +
                ", hold_expires_at = NULL" + where + " AND status = 'free'");
          break;
        case 7:  // a payment started
          Write("INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents) "
                "VALUES (" + key + ", " + e + ", " + s + ", " + fan + ", 5000)");
          break;
        case 8:  // a ticket deleted (a violation if its seat was sold)
          Write("DELETE FROM tickets" + where);
          break;
        default:  // several events in one transaction
          Write("UPDATE seats SET version = version + 1 WHERE seat = " + s +
                " AND event_id IN (" + e + ", " + std::to_string(event(random)) + ")");
      }
    }
  }


  // What the feed has decoded so far: transactions (test_decoding) or
  // changes (ChangeFeed); only whether it moves matters.
  std::uint64_t Decoded() const {
    return test_feed_ ? test_feed_->transactions() : change_feed_->stats().decoded_total;
  }

  // A full pass of the same entries on the same data, no feed.
  metrics::PollState FullPass() {
    config::Config config = testing::ConfigFromToml(Toml(false), db_->dsn());
    metrics::SnapshotStore store;
    poll::Poller poller(config, checks::BuildChecks(config), store, "test");
    return poller.RunAllOnce();
  }

  static const metrics::IncrementalStatus& Incremental(const metrics::PollState& state,
                                                       const std::string& check) {
    const auto& status = Find(state, check);
    if (!status.incremental) throw std::runtime_error(check + " is not incremental");
    return *status.incremental;
  }

  std::unique_ptr<ScratchDatabase> db_;
  std::unique_ptr<pqxx::connection> writer_;
  config::Config config_;
  metrics::SnapshotStore store_;
  std::unique_ptr<poll::Poller> poller_;
  TestDecodingFeed* test_feed_ = nullptr;
  changes::ChangeFeed* change_feed_ = nullptr;
  int payment_ = 0;
};

// Claims, holds, sales, releases and a few violations at random, a cycle
// after each burst; at the end the incremental rows are the full pass's.
TEST_P(IncrementalCheckTest, IncrementalEqualsFullPassAfterRandomWorkload) {
  metrics::PollState first = Cycle();
  EXPECT_EQ(Incremental(first, "booking_reconciliation").full_passes.at("startup"), 1u);
  EXPECT_EQ(Incremental(first, "booking_reconciliation").mode, "incremental");
  std::mt19937 random(20261201);
  std::uint64_t rechecked = 0;
  for (int burst = 0; burst < 12; ++burst) {
    RandomWrites(random, 8);
    metrics::PollState state = Cycle();
    rechecked += Incremental(state, "booking_reconciliation").dirty_keys;
    EXPECT_EQ(Incremental(state, "booking_reconciliation").mode, "incremental");
  }
  metrics::PollState last = Cycle();
  metrics::PollState full = FullPass();
  EXPECT_EQ(Verdict(last), Verdict(full));
  EXPECT_GT(Verdict(full).size(), 12u * 7u) << "every event's inventory at least";
  // Built key by key in parts, the inventory is what a full render of the
  // same rows writes: one header, then the same samples (in key order
  // rather than the query's).
  ASSERT_TRUE(Find(last, "event_inventory").rendered);
  ASSERT_TRUE(Find(full, "event_inventory").rendered);
  EXPECT_EQ(Exposition(Find(last, "event_inventory").rendered->Text()),
            Exposition(Find(full, "event_inventory").rendered->Text()));
  // The rechecks did the work: one full pass, at startup, for each check.
  for (const char* check : {"booking_reconciliation", "event_inventory"}) {
    const auto& status = Incremental(last, check);
    std::uint64_t passes = 0;
    for (const auto& [reason, count] : status.full_passes) passes += count;
    EXPECT_EQ(passes, 1u) << check;
  }
  EXPECT_GT(rechecked, 0u);
  EXPECT_GT(Decoded(), 0u);
}

// A recheck of one event among 600 rebuilds the inventory part that holds
// it; every other part is the object the last run published (which the
// snapshot shares and the gzip cache deflated once), and the whole is still
// what a full pass renders.
TEST_P(IncrementalCheckTest, ARecheckRebuildsOnlyThePartOfTheKeyItChanged) {
  db_->Exec("INSERT INTO seats (event_id, seat) "
            "SELECT e, 'S' || s FROM generate_series(13, 600) e, generate_series(1, 2) s");
  metrics::PollState first = Cycle();
  ASSERT_EQ(Incremental(first, "event_inventory").mode, "incremental");
  ASSERT_TRUE(Find(first, "event_inventory").rendered);
  std::vector<std::shared_ptr<const std::string>> before =
      Find(first, "event_inventory").rendered->parts;
  // The header, then 600 events in parts of about 128.
  ASSERT_GE(before.size(), 5u);
  Write("UPDATE seats SET status = 'held', holder = 'fan1', "
        "hold_expires_at = now() + interval '1 hour' WHERE event_id = 450 AND seat = 'S1'");
  metrics::PollState next = Cycle();
  EXPECT_EQ(Incremental(next, "event_inventory").dirty_keys, 1u);
  const auto& after = Find(next, "event_inventory").rendered->parts;
  ASSERT_EQ(after.size(), before.size());
  std::size_t rebuilt = 0;
  for (std::size_t i = 0; i < after.size(); ++i) {
    if (after[i].get() == before[i].get()) continue;
    ++rebuilt;
    EXPECT_NE(after[i]->find("event_id=\"450\",kind=\"seats_held\"} 1\n"), std::string::npos)
        << "part " << i << " was rebuilt without the changed key";
  }
  EXPECT_EQ(rebuilt, 1u);
  std::string text = Find(next, "event_inventory").rendered->Text();
  EXPECT_EQ(testing::Sample(text, "seatwatch_event_inventory{event_id=\"450\",kind=\"seats_free\"}"),
            1);
  EXPECT_EQ(Exposition(text), Exposition(Find(FullPass(), "event_inventory").rendered->Text()));
  // A cycle with nothing changed publishes the very same parts.
  metrics::PollState idle = Cycle();
  EXPECT_EQ(Find(idle, "event_inventory").rendered->parts, after);
}

std::uint64_t Mismatches(const metrics::IncrementalStatus& status) {
  std::uint64_t total = 0;
  for (const auto& [invariant, count] : status.mismatches) total += count;
  return total;
}

// Backstops among the rechecks of the random workload: each compares the
// state the rechecks built with what it reads (nothing pending: the writes
// were drained and rechecked the cycle before), and none differs.
TEST_P(IncrementalCheckTest, BackstopsAmongTheRechecksFindNoMismatch) {
  config_.changes.full_pass_interval = 300ms;
  MakePoller();
  metrics::PollState state = Cycle();
  ASSERT_EQ(Incremental(state, "booking_reconciliation").mode, "incremental");
  // Holds taken and released all the while on a connection of their own:
  // some commit between a cycle's drain and its full pass's snapshot, which
  // the feed hands over only at the next drain.
  std::atomic<bool> stop{false};
  std::atomic<int> background_writes{0};
  std::thread background([&] {
    auto connection = db_->Connect();
    std::mt19937 random(7);
    std::uniform_int_distribution<int> event(1, 12);
    std::uniform_int_distribution<int> seat(1, 10);
    while (!stop) {
      std::string where = " WHERE event_id = " + std::to_string(event(random)) +
                          " AND seat = 'S" + std::to_string(seat(random)) + "'";
      try {
        pqxx::nontransaction tx(*connection);
        tx.exec("UPDATE seats SET status = 'held', holder = 'bg', "
                "hold_expires_at = now() + interval '1 hour'" + where + " AND status = 'free'");
        tx.exec("UPDATE seats SET status = 'free', holder = NULL, hold_expires_at = NULL" +
                where + " AND holder = 'bg' AND random() < 0.5");
        background_writes += 2;
      } catch (const std::exception& e) {
        ADD_FAILURE() << "background write: " << e.what();
        return;
      }
      // Sparse enough that most keys are not pending at a backstop, which
      // then compares them.
      std::this_thread::sleep_for(15ms);
    }
  });
  std::mt19937 random(20261206);
  for (int burst = 0; burst < 15; ++burst) {
    RandomWrites(random, 8);
    state = Cycle();
    if (burst % 3 == 2) {
      std::this_thread::sleep_for(350ms);
      state = Cycle();
    }
  }
  stop = true;
  background.join();
  EXPECT_GT(background_writes, 50);
  // One write more, so that the last backstop's position is read past.
  Write("UPDATE seats SET version = version + 1 WHERE event_id = 12 AND seat = 'S10'");
  state = Cycle();
  state = Cycle();
  for (const char* check : {"booking_reconciliation", "event_inventory"}) {
    const auto& status = Incremental(state, check);
    EXPECT_GE(status.full_passes.at("backstop"), 5u) << check;
    EXPECT_EQ(Mismatches(status), 0u) << check;
  }
  const auto& status = Incremental(state, "booking_reconciliation");
  EXPECT_EQ(status.mismatches.size(), 6u) << "each invariant from 0";
  EXPECT_EQ(Incremental(state, "event_inventory").mismatches.count(""), 1u);
  std::size_t violations = 0;
  for (const auto& line : Verdict(FullPass())) violations += line.rfind("seatwatch_", 0) != 0;
  EXPECT_GT(violations, 0u) << "the backstops compared violated keys too";
  EXPECT_EQ(Verdict(state), Verdict(FullPass()));
}

// The feed's test hook: a transaction the feed does not hand over. The
// rechecks cannot see it; the next backstop reads it, corrects the state,
// and once the feed has read past that backstop with no change of the key,
// counts a mismatch for each invariant and entry it changed.
class FeedSelfCheckTest : public IncrementalCheckTest {};

TEST_P(FeedSelfCheckTest, ATransactionTheFeedSkippedIsAMismatchAtTheNextBackstop) {
  config_.changes.full_pass_interval = 3s;
  MakePoller();
  auto seeded = std::chrono::steady_clock::now();
  metrics::PollState state = Cycle();
  ASSERT_EQ(Incremental(state, "booking_reconciliation").mode, "incremental");

  test_feed_->SkipNextTransaction();
  Write("UPDATE seats SET status = 'sold', holder = 'fan' WHERE event_id = 7 AND seat = 'S3'");
  state = Cycle();
  EXPECT_EQ(test_feed_->skipped(), 1u);
  // On a machine slow enough for this cycle to be the backstop already, the
  // next drain confirms; else the rechecks missed the sale.
  bool early = Incremental(state, "booking_reconciliation").full_passes.at("backstop") > 0;
  if (!early) {
    EXPECT_NE(Verdict(state), Verdict(FullPass())) << "the rechecks missed the sale";
  }

  std::this_thread::sleep_until(seeded + 3100ms);
  state = Cycle();
  ASSERT_GE(Incremental(state, "booking_reconciliation").full_passes.at("backstop"), 1u);
  EXPECT_EQ(Verdict(state), Verdict(FullPass())) << "the backstop corrected it";
  if (!early) {
    EXPECT_EQ(Mismatches(Incremental(state, "booking_reconciliation")), 0u)
        << "not before the feed has read past the backstop";
  }

  // A change elsewhere moves the WAL on; its drain reads past the backstop.
  Write("UPDATE seats SET version = version + 1 WHERE event_id = 12 AND seat = 'S10'");
  state = Cycle();
  const auto& booking = Incremental(state, "booking_reconciliation");
  EXPECT_EQ(booking.mismatches.at("sold_seat_without_ticket"), 1u);
  EXPECT_EQ(Mismatches(booking), 1u) << "the other five invariants did not change at event 7";
  EXPECT_EQ(Incremental(state, "event_inventory").mismatches.at(""), 1u)
      << "event 7's seats_sold and seats_free";
  state = Cycle();
  EXPECT_EQ(Mismatches(Incremental(state, "booking_reconciliation")), 1u) << "counted once";
  EXPECT_EQ(Verdict(state), Verdict(FullPass()));
}

INSTANTIATE_TEST_SUITE_P(Feeds, FeedSelfCheckTest, ::testing::Values(Feed::kTestDecoding),
                         [](const ::testing::TestParamInfo<Feed>&) {
                           return std::string("TestDecoding");
                         });

TEST_P(IncrementalCheckTest, InjectedViolationShowsWithItsKeyAfterOneCycleAndRepairClears) {
  metrics::PollState state = Cycle();
  EXPECT_EQ(Verdict(state), Verdict(FullPass()));
  state = Cycle();
  EXPECT_EQ(Incremental(state, "booking_reconciliation").dirty_keys, 0u) << "nothing changed";

  Write("UPDATE seats SET status = 'sold', holder = 'fan' WHERE event_id = 7 AND seat = 'S3'");
  state = Cycle();
  const auto& status = Incremental(state, "booking_reconciliation");
  EXPECT_EQ(status.mode, "incremental");
  EXPECT_EQ(status.dirty_keys, 1u);
  const auto& check = Find(state, "booking_reconciliation");
  ASSERT_TRUE(check.output);
  bool found = false;
  for (const auto& invariant : check.output->invariants) {
    if (invariant.name != "sold_seat_without_ticket") {
      EXPECT_TRUE(invariant.ok()) << invariant.name;
      continue;
    }
    ASSERT_EQ(invariant.violations.size(), 1u);
    EXPECT_EQ(invariant.violations[0].labels.at(0).value, "7");
    EXPECT_EQ(invariant.violations[0].value, 1);
    found = true;
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(Verdict(state), Verdict(FullPass()));

  Write("BEGIN; INSERT INTO tickets VALUES (7, 'S3', 'fan'); "
        "INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents, status) "
        "VALUES ('k7', 7, 'S3', 'fan', 100, 'confirmed'); COMMIT");
  state = Cycle();
  for (const auto& invariant : Find(state, "booking_reconciliation").output->invariants) {
    EXPECT_TRUE(invariant.ok()) << invariant.name;
  }
  EXPECT_EQ(Verdict(state), Verdict(FullPass()));
  EXPECT_EQ(Incremental(state, "booking_reconciliation").full_passes.at("startup"), 1u);
}

TEST_P(IncrementalCheckTest, HeldSeatExpiryMovesItToExpiredWithNoWrite) {
  Write("UPDATE seats SET status = 'held', holder = 'fan', "
        "hold_expires_at = now() + interval '1500 milliseconds' "
        "WHERE event_id = 4 AND seat = 'S1'");
  double expires = std::stod(db_->Scalar(
      "SELECT extract(epoch FROM hold_expires_at) FROM seats WHERE event_id = 4 AND seat = 'S1'"));
  metrics::PollState state = Cycle();
  std::string held = "seatwatch_event_inventory{event_id=\"4\",kind=\"seats_held\"}";
  std::string expired = "seatwatch_event_inventory{event_id=\"4\",kind=\"seats_held_expired\"}";
  auto inventory = [&](const metrics::PollState& s, const std::string& series) {
    const auto& check = Find(s, "event_inventory");
    EXPECT_TRUE(check.rendered) << check.last_error;
    return check.rendered ? testing::Sample(check.rendered->Text(), series) : -1;
  };
  ASSERT_LT(std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
                .count(),
            expires)
      << "the machine was too slow to see the hold before it lapsed";
  EXPECT_EQ(inventory(state, held), 1);
  EXPECT_EQ(inventory(state, expired), 0);
  std::uint64_t decoded = Decoded();
  while (std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
             .count() <= expires + 0.2) {
    std::this_thread::sleep_for(100ms);
  }
  state = Cycle();
  EXPECT_EQ(Decoded(), decoded) << "no write at all";
  EXPECT_EQ(inventory(state, held), 0);
  EXPECT_EQ(inventory(state, expired), 1);
  const auto& status = Incremental(state, "event_inventory");
  EXPECT_EQ(status.mode, "incremental");
  EXPECT_EQ(status.dirty_keys, 1u) << "event 4 alone, by its expiry";
  EXPECT_EQ(status.full_passes.at("startup"), 1u);
  EXPECT_EQ(status.full_passes.at("backstop"), 0u);
  EXPECT_EQ(Verdict(state), Verdict(FullPass()));
}

INSTANTIATE_TEST_SUITE_P(Feeds, IncrementalCheckTest,
                         ::testing::Values(Feed::kTestDecoding, Feed::kChangeFeed),
                         [](const ::testing::TestParamInfo<Feed>& info) {
                           return info.param == Feed::kChangeFeed ? std::string("ChangeFeed")
                                                                  : std::string("TestDecoding");
                         });

}  // namespace
}  // namespace seatwatch
