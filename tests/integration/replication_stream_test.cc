// The replication stream against a real walsender: it streams what commits,
// confirms only what it was given, and a walsender whose client went silent
// (a path that stalled with its sockets open) ends at its own
// wal_sender_timeout, which the stream sets, and takes the temporary slot
// with it: no WAL is kept for a client that is not there.
#include "changes/replication_stream.h"

#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <string>
#include <thread>

#include <pqxx/connection>
#include <pqxx/nontransaction>

#include "support/daemon_process.h"
#include "support/incremental_daemon.h"
#include "support/scratch_db.h"
#include "support/stall_proxy.h"
#include "support/test_env.h"

namespace seatwatch::changes {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::AdminScalar;

std::uint64_t FlushLsn() {
  return std::stoull(AdminScalar("SELECT (pg_current_wal_flush_lsn() - '0/0')::bigint"));
}

StreamOptions OptionsVia(int port, const std::string& db) {
  StreamOptions options;
  options.conninfo = "host=127.0.0.1 port=" + std::to_string(port) + " user=" +
                     testing::kChangesRole + " dbname=" + db +
                     " application_name=seatwatch-test-stream";
  return options;
}

TEST(ReplicationStreamTest, StreamsACommitAndConfirmsOnlyWhatItWasGiven) {
  testing::ScratchDatabase db("sw_stream_basic");
  testing::RunChangesSetup(db);
  testing::ScratchChangesDsn("postgres");  // the role exists
  ReplicationStream stream(OptionsVia(testing::ScratchTcpPort(), db.name()));
  stream.Open("sw_stream_basic_1", "seatwatch", 5s);
  EXPECT_EQ(AdminScalar("SELECT active_pid::text || ':' || temporary::text FROM "
                        "pg_replication_slots WHERE slot_name = 'sw_stream_basic_1'"),
            std::to_string(stream.backend_pid()) + ":true");
  EXPECT_EQ(AdminScalar("SELECT backend_type FROM pg_stat_activity WHERE pid = " +
                        std::to_string(stream.backend_pid())),
            "walsender");
  // Flushed at COMMIT (the scratch cluster's default is off): the flush
  // position read after it is past the commit.
  db.Exec("SET synchronous_commit = on; "
          "INSERT INTO seats (event_id, seat, status) VALUES (41, 'Z1', 'free')");
  std::uint64_t flushed = FlushLsn();
  ASSERT_TRUE(stream.WaitThrough(flushed, 10s));
  StreamTake take = stream.Take(1000);
  // Begin, Relation, Insert, Commit.
  ASSERT_EQ(take.messages.size(), 4u);
  EXPECT_EQ(take.messages.front()[0], 'B');
  EXPECT_EQ(take.messages[1][0], 'R');
  EXPECT_EQ(take.messages[2][0], 'I');
  EXPECT_EQ(take.messages.back()[0], 'C');
  EXPECT_GE(take.complete_through, flushed);
  // Nothing confirmed yet: the slot keeps the WAL of what was handed over.
  std::this_thread::sleep_for(1500ms);  // a status update at least
  std::string confirmed = AdminScalar(
      "SELECT (confirmed_flush_lsn - '0/0')::bigint FROM pg_replication_slots WHERE slot_name = "
      "'sw_stream_basic_1'");
  EXPECT_LT(std::stoull(confirmed), flushed);
  stream.Confirm(take.complete_through);
  EXPECT_TRUE(testing::WaitFor([&] {
    return std::stoull(AdminScalar("SELECT (confirmed_flush_lsn - '0/0')::bigint FROM "
                                   "pg_replication_slots WHERE slot_name = "
                                   "'sw_stream_basic_1'")) == take.complete_through;
  }, 5s));
  stream.Close();
  EXPECT_TRUE(testing::WaitFor([&] {
    return AdminScalar("SELECT count(*) FROM pg_replication_slots WHERE slot_name = "
                       "'sw_stream_basic_1'") == "0";
  }, 5s));
}

TEST(ReplicationStreamTest, AWalsenderWhoseClientWentSilentEndsAtItsTimeoutWithItsSlot) {
  testing::ScratchDatabase db("sw_stream_stall");
  testing::RunChangesSetup(db);
  testing::ScratchChangesDsn("postgres");
  testing::StallProxy proxy(testing::ScratchTcpPort());
  StreamOptions options = OptionsVia(proxy.port(), db.name());
  options.sender_timeout = 3s;
  options.stall_timeout = 120s;  // this client never gives up: the server must
  ReplicationStream stream(options);
  stream.Open("sw_stream_stall_1", "seatwatch", 5s);
  int pid = stream.backend_pid();
  ASSERT_TRUE(stream.WaitThrough(FlushLsn(), 10s));
  // The server's default stays 60 s: the stream's own setting decides.
  EXPECT_EQ(AdminScalar("SELECT setting FROM pg_settings WHERE name = 'wal_sender_timeout'"),
            "60000");
  proxy.HoldOpen();
  auto held = Clock::now();
  // WAL goes on meanwhile.
  bool gone = testing::WaitFor([&] {
    db.Exec("INSERT INTO seats (event_id, seat, status) SELECT 42, 'Z' || g, 'free' FROM "
            "generate_series(1, 200) g ON CONFLICT DO NOTHING");
    db.Exec("DELETE FROM seats WHERE event_id = 42");
    return AdminScalar("SELECT count(*) FROM pg_replication_slots WHERE slot_name = "
                       "'sw_stream_stall_1'") == "0";
  }, 60s);
  double seconds = testing::SecondsSince(held);
  ASSERT_TRUE(gone) << "the slot of a silent client was still there after 60 s";
  std::cerr << "walsender " << pid << " and its slot gone " << seconds
            << " s after its client went silent (wal_sender_timeout 3 s)\n";
  EXPECT_GE(seconds, 2.0);
  EXPECT_LE(seconds, 3.0 + 2.0);
  EXPECT_EQ(AdminScalar("SELECT count(*) FROM pg_stat_activity WHERE pid = " +
                        std::to_string(pid)),
            "0");
  std::string log = testing::ReadFile(testing::ScratchPgDir() + "/postgres.log");
  EXPECT_NE(log.find("terminating walsender process due to replication timeout"),
            std::string::npos);
}

}  // namespace
}  // namespace seatwatch::changes
