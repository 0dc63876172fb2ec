// What the locks check shows of other sessions' query text, against a real
// PostgreSQL: a session blocked in `ALTER ROLE ... PASSWORD '...'` behind an
// idle-in-transaction holder. By default its literals are placeholders in
// /api/locks, in the lock episode log lines and in --once's forest; the text
// appears as sent only with [locks] show_query = "raw".
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include <pqxx/connection>
#include <pqxx/transaction>

#include "checks/lock_check.h"
#include "db/query_cache.h"
#include "support/async_session.h"
#include "support/daemon_process.h"
#include "support/http_client.h"
#include "support/scratch_db.h"
#include "support/test_env.h"

namespace seatwatch {
namespace {

using namespace std::chrono_literals;
using testing::AsyncSession;
using testing::ScratchDatabase;
using testing::WaitFor;

constexpr const char* kRole = "sw_filler";
constexpr const char* kSecret = "TopSecret_zzz";
constexpr const char* kHolderSecret = "HolderSecret_yyy";

class LockQueryTextTest : public ::testing::Test {
 protected:
  LockQueryTextTest() : db_("sw_lock_query", ScratchDatabase::Schema::kNone) {
    db_.Exec(std::string("DROP ROLE IF EXISTS ") + kRole);
    db_.Exec(std::string("CREATE ROLE ") + kRole);
    monitor_ = db_.Connect();
    config_.log_threshold = 1h;
  }
  ~LockQueryTextTest() override {
    waiter_.reset();
    holder_.reset();
    try {
      db_.Exec(std::string("DROP ROLE IF EXISTS ") + kRole);
    } catch (...) {
    }
  }

  // The holder changes the role's password and stays in its transaction; the
  // waiter's ALTER ROLE then waits for the holder's transaction.
  void BlockAlterRole(const std::string& secret = kSecret) {
    holder_ = std::make_unique<AsyncSession>(db_.dsn(), "holder");
    waiter_ = std::make_unique<AsyncSession>(db_.dsn(), "waiter");
    ASSERT_EQ(holder_->Run(std::string("BEGIN; ALTER ROLE ") + kRole + " PASSWORD '" +
                           kHolderSecret + "'"),
              "");
    waiter_->Send(std::string("ALTER ROLE ") + kRole + " PASSWORD '" + secret + "'");
    ASSERT_TRUE(WaitFor([&] { return Waiting() == 1; }, 10s)) << Waiting();
  }

  void Release() {
    ASSERT_EQ(holder_->Run("ROLLBACK"), "");
    EXPECT_EQ(waiter_->Finish(), "");
  }

  int Waiting() {
    return std::stoi(db_.Scalar("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = "
                                "'Lock' AND datname = current_database()"));
  }

  metrics::CheckOutput Poll(checks::LockCheck& check) {
    pqxx::transaction<pqxx::read_committed, pqxx::read_only> tx(*monitor_);
    db::QueryCache cache;
    db::LazyTransaction lazy(tx);
    checks::CheckContext context{lazy, cache, std::chrono::system_clock::now()};
    metrics::CheckOutput output = check.Run(context);
    tx.commit();
    return output;
  }

  ScratchDatabase db_;
  std::unique_ptr<pqxx::connection> monitor_;
  std::unique_ptr<AsyncSession> holder_;
  std::unique_ptr<AsyncSession> waiter_;
  config::LocksConfig config_;
};

TEST_F(LockQueryTextTest, DefaultShowsBlockedAlterRoleWithoutItsPassword) {
  checks::LockCheck check(config_);
  BlockAlterRole();
  metrics::CheckOutput output = Poll(check);
  const std::string& json = output.documents.at("locks");
  EXPECT_NE(json.find("\"pid\":" + std::to_string(waiter_->pid())), std::string::npos) << json;
  EXPECT_EQ(json.find(kSecret), std::string::npos) << json;
  EXPECT_EQ(json.find(kHolderSecret), std::string::npos) << json;
  EXPECT_NE(json.find("\"query\":\"ALTER ROLE sw_filler PASSWORD $1\""), std::string::npos)
      << json;
  EXPECT_NE(json.find("\"query\":\"BEGIN; ALTER ROLE sw_filler PASSWORD $1\""),
            std::string::npos)
      << json;
  EXPECT_EQ(output.report.find(kSecret), std::string::npos) << output.report;
  EXPECT_NE(output.report.find("query: ALTER ROLE sw_filler PASSWORD $1"), std::string::npos)
      << output.report;
  Release();
}

TEST_F(LockQueryTextTest, RawShowsTheTextAsSent) {
  config_.show_query = config::LocksConfig::ShowQuery::kRaw;
  checks::LockCheck check(config_);
  BlockAlterRole();
  metrics::CheckOutput output = Poll(check);
  const std::string& json = output.documents.at("locks");
  EXPECT_NE(json.find(std::string("\"query\":\"ALTER ROLE sw_filler PASSWORD '") + kSecret + "'\""),
            std::string::npos)
      << json;
  EXPECT_NE(output.report.find(kSecret), std::string::npos) << output.report;
  Release();
}

TEST_F(LockQueryTextTest, NoneShowsNoText) {
  config_.show_query = config::LocksConfig::ShowQuery::kNone;
  checks::LockCheck check(config_);
  BlockAlterRole();
  metrics::CheckOutput output = Poll(check);
  const std::string& json = output.documents.at("locks");
  EXPECT_NE(json.find("\"pid\":" + std::to_string(waiter_->pid())), std::string::npos) << json;
  EXPECT_EQ(json.find("\"query\""), std::string::npos) << json;
  EXPECT_EQ(json.find("ALTER ROLE"), std::string::npos) << json;
  Release();
}

// The limit counts characters of the normalized text: a cut never falls
// inside the literal, whatever its length.
TEST_F(LockQueryTextTest, CutsAfterNormalizing) {
  config_.query_max_length = 32;
  checks::LockCheck check(config_);
  BlockAlterRole();
  metrics::CheckOutput output = Poll(check);
  const std::string& json = output.documents.at("locks");
  EXPECT_NE(json.find("\"query\":\"ALTER ROLE sw_filler PASSWORD $1\""), std::string::npos) << json;
  EXPECT_EQ(json.find("TopSec"), std::string::npos) << json;
  Release();
}

// The server sends a bounded prefix of each text to normalize (eight times
// the limit): a literal it cuts open is still hidden.
TEST_F(LockQueryTextTest, LiteralCutOpenByTheServerIsHidden) {
  config_.query_max_length = 40;
  checks::LockCheck check(config_);
  BlockAlterRole(kSecret + std::string(2000, 'z'));
  metrics::CheckOutput output = Poll(check);
  const std::string& json = output.documents.at("locks");
  EXPECT_NE(json.find("\"query\":\"ALTER ROLE sw_filler PASSWORD $1\""), std::string::npos) << json;
  EXPECT_EQ(json.find("TopSec"), std::string::npos) << json;
  EXPECT_EQ(json.find("zzz"), std::string::npos) << json;
  Release();
}

// Unauthenticated /api/locks, the lock wait log line and --once's forest of
// the built daemon, with the shipped default.
TEST_F(LockQueryTextTest, DaemonApiLogAndOnceShowNoPassword) {
  std::string dir = testing::MakeTempDir("seatwatch-lock-query");
  int port = testing::FreePort();
  std::string config = dir + "/seatwatch.toml";
  testing::WriteFile(config, "[database]\ndsn = \"" + db_.dsn() + "\"\n" +
                                 "[http]\nlisten = \"127.0.0.1:" + std::to_string(port) + "\"\n" +
                                 "[locks]\ninterval = \"200ms\"\nlog_threshold = \"0s\"\n");
  testing::DaemonProcess daemon({"--config", config});
  BlockAlterRole();
  std::string api;
  ASSERT_TRUE(WaitFor([&] {
    api = testing::HttpGet(port, "/api/locks").body;
    return api.find("\"pid\":" + std::to_string(waiter_->pid())) != std::string::npos;
  }, 10s)) << api << daemon.Log();
  EXPECT_NE(api.find("\"query\":\"ALTER ROLE sw_filler PASSWORD $1\""), std::string::npos) << api;
  EXPECT_EQ(api.find(kSecret), std::string::npos) << api;
  EXPECT_EQ(api.find(kHolderSecret), std::string::npos) << api;
  const std::string line = "msg=\"lock wait past threshold\"";
  ASSERT_TRUE(WaitFor([&] { return daemon.Log().find(line) != std::string::npos; }, 10s))
      << daemon.Log();

  testing::DaemonProcess once({"--config", config, "--once"});
  ASSERT_TRUE(once.WaitExit(30s));
  once.Stop();
  std::string report = once.Log();
  EXPECT_NE(report.find("query: ALTER ROLE sw_filler PASSWORD $1"), std::string::npos) << report;
  EXPECT_EQ(report.find(kSecret), std::string::npos) << report;
  EXPECT_EQ(report.find(kHolderSecret), std::string::npos) << report;

  daemon.Stop();
  std::string log = daemon.Log();
  EXPECT_NE(log.find("query=\"ALTER ROLE sw_filler PASSWORD $1\""), std::string::npos) << log;
  EXPECT_NE(log.find("root_query=\"BEGIN; ALTER ROLE sw_filler PASSWORD $1\""), std::string::npos)
      << log;
  EXPECT_EQ(log.find(kSecret), std::string::npos) << log;
  EXPECT_EQ(log.find(kHolderSecret), std::string::npos) << log;
  Release();
}

}  // namespace
}  // namespace seatwatch
