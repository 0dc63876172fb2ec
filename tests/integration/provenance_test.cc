// Which commit broke it, end to end: the built daemon with the shipped
// booking pack in incremental mode against the scratch PostgreSQL set up
// with queries/booking/changes-setup.sql. Each violation below is made by
// one known transaction; /api/invariants must name that transaction (its
// xid, commit LSN and time) and what it changed of the violated key, and
// the log line that reports the violation must say the same:
// - an UPDATE from a short session (the admin script selling a seat);
// - the same from a session with application_name=admin-script that stays
//   open 3 s before its COMMIT: the feed sees it running, so its
//   application, user and client are named;
// - an INSERT (a ticket for a seat nobody sold);
// - a DELETE (a sold seat's ticket removed);
// - one transaction of two statements on two events: both keys name it.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include <pqxx/pqxx>

#include "support/daemon_process.h"
#include "support/daemon_test.h"
#include "support/incremental_daemon.h"
#include "support/test_env.h"

namespace seatwatch {
namespace {

using namespace std::chrono_literals;
using testing::IncrementalDaemon;
using testing::ScratchDatabase;
using testing::WaitFor;

// The JSON of invariant `name`'s violation of `event_id` in /api/invariants
// (from its labels to the next violation's), or "" when it is not there.
std::string ViolationJson(const std::string& api, const std::string& name, int event_id) {
  std::size_t at = api.find("{\"name\":\"" + name + "\"");
  if (at == std::string::npos) return "";
  std::size_t end = api.find("{\"name\":\"", at + 1);
  std::string labels = "{\"labels\":{\"event_id\":\"" + std::to_string(event_id) + "\"}";
  std::size_t begin = api.find(labels, at);
  if (begin == std::string::npos || (end != std::string::npos && begin > end)) return "";
  std::size_t next = api.find("{\"labels\":", begin + 1);
  return api.substr(begin, std::min(next, end) - begin);
}

// The 32-bit xid pgoutput names, of the caller's transaction.
std::uint32_t Xid(pqxx::transaction_base& tx) {
  return static_cast<std::uint32_t>(tx.exec1("SELECT txid_current()")[0].as<std::uint64_t>() &
                                    0xffffffffu);
}

class ProvenanceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = std::make_unique<ScratchDatabase>("sw_provenance");
    testing::SeedBookingSeats(*db_, 1, 4, 1000);
    testing::RunChangesSetup(*db_);
    daemon_ = std::make_unique<IncrementalDaemon>(
        *db_, "enabled = true\ninterval = \"500ms\"\nfull_pass_interval = \"1h\"\n");
    ASSERT_TRUE(daemon_->WaitIncremental(60s)) << daemon_->Metrics() << daemon_->process().Log();
  }

  // Waits for the violation with a first_violated_by; returns its JSON.
  std::string WaitCause(const std::string& invariant, int event_id) {
    std::string found;
    WaitFor([&] {
      found = ViolationJson(daemon_->ApiInvariants(), invariant, event_id);
      return found.find("\"first_violated_by\"") != std::string::npos;
    }, 20s);
    return found;
  }

  std::unique_ptr<ScratchDatabase> db_;
  std::unique_ptr<IncrementalDaemon> daemon_;
};

TEST_F(ProvenanceTest, AnUpdateIsNamedWithItsXidCommitAndChange) {
  pqxx::connection connection(db_->dsn());
  pqxx::work tx(connection);
  std::uint32_t xid = Xid(tx);
  tx.exec0("UPDATE seats SET status = 'sold', holder = 'adm' WHERE event_id = 1 AND seat = 'V1'");
  std::string lsn = tx.exec1("SELECT pg_current_wal_insert_lsn()::text")[0].c_str();
  double before = std::stod(tx.exec1("SELECT extract(epoch FROM clock_timestamp())")[0].c_str());
  tx.commit();
  std::string json = WaitCause("sold_seat_without_ticket", 1);
  ASSERT_NE(json.find("\"first_violated_by\""), std::string::npos)
      << json << daemon_->ApiInvariants();
  EXPECT_NE(json.find("{\"xid\":" + std::to_string(xid) + ","), std::string::npos) << json;
  EXPECT_NE(json.find("\"text\":\"UPDATE seats(event_id=1, seat=V1) status ?→sold holder ?→adm"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"operation\":\"UPDATE\",\"table\":\"seats\",\"key\":{\"event_id\":\"1\"}"),
            std::string::npos)
      << json;
  // The commit record comes after every WAL position read in the transaction.
  std::size_t at = json.find("\"commit_lsn\":\"");
  ASSERT_NE(at, std::string::npos) << json;
  std::string commit_lsn = json.substr(at + 14, json.find('"', at + 14) - at - 14);
  EXPECT_EQ(db_->Scalar("SELECT '" + commit_lsn + "'::pg_lsn >= '" + lsn + "'::pg_lsn"), "t")
      << commit_lsn << " " << lsn;
  at = json.find("\"commit_timestamp_seconds\":");
  ASSERT_NE(at, std::string::npos);
  double committed = std::stod(json.substr(at + 27));
  EXPECT_GE(committed, before);
  EXPECT_LE(committed, before + 5);
  // The log line that reports the violation says it too.
  std::string log = daemon_->process().Log();
  std::size_t line = log.find("msg=\"invariant violated\" check=booking_reconciliation "
                              "invariant=sold_seat_without_ticket key=\"event_id=1\"");
  ASSERT_NE(line, std::string::npos) << log;
  std::string text = log.substr(line, log.find('\n', line) - line);
  EXPECT_NE(text.find("xid=" + std::to_string(xid) + " committed_at="), std::string::npos) << text;
  EXPECT_NE(text.find("UPDATE seats(event_id=1, seat=V1) status ?→sold"), std::string::npos)
      << text;
}

TEST_F(ProvenanceTest, ASessionSeenRunningIsNamedByItsApplication) {
  pqxx::connection connection(db_->dsn() + " application_name=admin-script");
  pqxx::work tx(connection);
  std::uint32_t xid = Xid(tx);
  tx.exec0("UPDATE seats SET status = 'sold', holder = 'adm' WHERE event_id = 2 AND seat = 'V1'");
  std::this_thread::sleep_for(3s);
  tx.commit();
  std::string json = WaitCause("sold_seat_without_ticket", 2);
  EXPECT_NE(json.find("{\"xid\":" + std::to_string(xid) + ","), std::string::npos) << json;
  std::string user = db_->Scalar("SELECT current_user");
  EXPECT_NE(json.find("\"session\":{\"application_name\":\"admin-script\",\"user\":\"" + user +
                      "\",\"client_addr\":"),
            std::string::npos)
      << json;
  std::string log = daemon_->process().Log();
  EXPECT_NE(log.find("application=\\\"admin-script\\\" user=" + user), std::string::npos) << log;
}

TEST_F(ProvenanceTest, AnInsertADeleteAndATwoKeyTransactionAreEachNamed) {
  // An INSERT: a ticket for a seat nobody sold.
  pqxx::connection connection(db_->dsn());
  std::uint32_t insert_xid = 0;
  {
    pqxx::work tx(connection);
    insert_xid = Xid(tx);
    tx.exec0("INSERT INTO tickets (event_id, seat, fan) VALUES (3, 'V3', 'ghost')");
    tx.commit();
  }
  std::string json = WaitCause("ticket_without_sold_seat", 3);
  EXPECT_NE(json.find("{\"xid\":" + std::to_string(insert_xid) + ","), std::string::npos) << json;
  EXPECT_NE(json.find("\"operation\":\"INSERT\",\"table\":\"tickets\",\"key\":{\"event_id\":\"3\"}"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("fan ghost"), std::string::npos) << json;

  // A DELETE: the ticket of a correctly sold seat removed.
  db_->Exec("BEGIN; UPDATE seats SET status = 'sold', holder = 'fan-d' WHERE event_id = 4 AND "
            "seat = 'V5'; INSERT INTO tickets (event_id, seat, fan) VALUES (4, 'V5', 'fan-d'); "
            "INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents, status) "
            "VALUES ('prov-d', 4, 'V5', 'fan-d', 100, 'confirmed'); COMMIT");
  ASSERT_TRUE(WaitFor([&] {
    return testing::AllInvariantsOk(daemon_->Metrics()) == false &&
           ViolationJson(daemon_->ApiInvariants(), "sold_seat_without_ticket", 4).empty();
  }, 10s));
  // Let a recheck find event 4 clean after the sale.
  std::this_thread::sleep_for(2s);
  std::uint32_t delete_xid = 0;
  {
    pqxx::work tx(connection);
    delete_xid = Xid(tx);
    tx.exec0("DELETE FROM tickets WHERE event_id = 4 AND seat = 'V5'");
    tx.commit();
  }
  json = WaitCause("sold_seat_without_ticket", 4);
  EXPECT_NE(json.find("{\"xid\":" + std::to_string(delete_xid) + ","), std::string::npos) << json;
  EXPECT_NE(json.find("\"operation\":\"DELETE\",\"table\":\"tickets\",\"key\":{\"event_id\":\"4\"}"),
            std::string::npos)
      << json;
  EXPECT_EQ(json.find("{\"xid\":" + std::to_string(insert_xid) + ","), std::string::npos)
      << "a commit of another key: " << json;

  // Two statements, two events, one transaction: both keys name it, each
  // with its own change.
  std::uint32_t both_xid = 0;
  {
    pqxx::work tx(connection);
    both_xid = Xid(tx);
    tx.exec0("UPDATE seats SET status = 'sold', holder = 'adm' WHERE event_id = 5 AND seat = 'V2'");
    tx.exec0("UPDATE seats SET status = 'sold', holder = 'adm' WHERE event_id = 6 AND seat = 'V2'");
    tx.commit();
  }
  for (int event : {5, 6}) {
    json = WaitCause("sold_seat_without_ticket", event);
    EXPECT_NE(json.find("{\"xid\":" + std::to_string(both_xid) + ","), std::string::npos)
        << event << ": " << json;
    std::string change = "UPDATE seats(event_id=" + std::to_string(event) + ", seat=V2)";
    EXPECT_NE(json.find(change), std::string::npos) << json;
    std::string other = "UPDATE seats(event_id=" + std::to_string(event == 5 ? 6 : 5);
    EXPECT_EQ(json.find(other), std::string::npos) << "the other key's change: " << json;
  }
  std::string metrics = daemon_->Metrics();
  EXPECT_EQ(testing::Sample(metrics,
                            "seatwatch_provenance_evicted_total{check=\"booking_reconciliation\"}"),
            0);
  EXPECT_GE(testing::Sample(metrics, "seatwatch_provenance_commits{check=\"booking_reconciliation\"}"),
            3);
}

}  // namespace
}  // namespace seatwatch
