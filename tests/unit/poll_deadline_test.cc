// The pure parts of "never hang, never hide": a lane published as overdue,
// the TCP deadlines in the connection string, the server versions that know
// idle_session_timeout.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "db/conninfo.h"
#include "db/session.h"
#include "metrics/snapshot_builder.h"
#include "poll/state_publisher.h"
#include "support/daemon_process.h"

namespace seatwatch {
namespace {

TEST(PollDeadlineTest, OverdueLaneIsDownWithNoSeriesButKeepsItsCounters) {
  metrics::PollState state;
  state.database_up = true;
  metrics::CheckStatus check;
  check.name = "pack";
  check.has_run = true;
  check.success = true;
  check.errors["timeout"] = 3;
  auto output = std::make_shared<metrics::CheckOutput>();
  metrics::InvariantResult verdict;
  verdict.name = "sold_seat_without_ticket";
  output->invariants.push_back(verdict);
  check.output = output;
  check.rendered = metrics::RenderedText::Of("seatwatch_x 1\n");
  state.checks.push_back(check);
  metrics::CheckStatus never;
  never.name = "not_yet";
  state.checks.push_back(never);

  std::string before = metrics::BuildSnapshot(state).MetricsText();
  EXPECT_EQ(testing::Sample(before, "seatwatch_invariant_ok{invariant=\"sold_seat_without_ticket\"}"), 1);

  poll::MarkOverdue(state);
  std::string text = metrics::BuildSnapshot(state).MetricsText();
  EXPECT_EQ(testing::Sample(text, "seatwatch_up"), 0) << text;
  EXPECT_EQ(testing::Sample(text, "seatwatch_check_success{check=\"pack\"}"), 0) << text;
  EXPECT_TRUE(std::isnan(
      testing::Sample(text, "seatwatch_invariant_ok{invariant=\"sold_seat_without_ticket\"}")))
      << text;
  EXPECT_TRUE(std::isnan(testing::Sample(text, "seatwatch_x"))) << text;
  EXPECT_EQ(testing::Sample(text, "seatwatch_check_errors_total{check=\"pack\",reason=\"timeout\"}"), 3)
      << text;
  EXPECT_TRUE(std::isnan(testing::Sample(text, "seatwatch_check_success{check=\"not_yet\"}")));
}

TEST(PollDeadlineTest, ConninfoCarriesKeepalivesAndUserTimeout) {
  db::SessionSettings settings;
  settings.application_name = "seatwatch";
  settings.statement_timeout = std::chrono::milliseconds(5000);
  std::string conninfo = db::BuildConninfo("host=db dbname=booking", settings);
  for (const char* part : {"keepalives=1 ", "keepalives_idle=10 ", "keepalives_interval=5 ",
                           "keepalives_count=3 ", "tcp_user_timeout=15000 "}) {
    EXPECT_NE(conninfo.find(part), std::string::npos) << part << " in " << conninfo;
  }
}

TEST(PollDeadlineTest, DsnKeepsItsOwnKeepaliveSettings) {
  db::SessionSettings settings;
  std::string conninfo =
      db::BuildConninfo("host=db keepalives_idle=60 tcp_user_timeout=1000", settings);
  EXPECT_NE(conninfo.find("keepalives_idle='60'"), std::string::npos) << conninfo;
  EXPECT_EQ(conninfo.find("keepalives_idle=10"), std::string::npos) << conninfo;
  EXPECT_NE(conninfo.find("tcp_user_timeout='1000'"), std::string::npos) << conninfo;
  EXPECT_EQ(conninfo.find("tcp_user_timeout=15000"), std::string::npos) << conninfo;
  EXPECT_NE(conninfo.find("keepalives_count=3"), std::string::npos) << conninfo;
}

TEST(PollDeadlineTest, IdleSessionTimeoutFromPostgres14) {
  EXPECT_FALSE(db::IdleSessionTimeoutSupported(130012));
  EXPECT_TRUE(db::IdleSessionTimeoutSupported(140000));
  EXPECT_TRUE(db::IdleSessionTimeoutSupported(150018));
}

}  // namespace
}  // namespace seatwatch
