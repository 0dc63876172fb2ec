// GET / on a real loopback server wired by RegisterStatusPage: the page is
// rendered from whatever snapshot is current at each view, with the
// cleanup's status from its source. No database.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "http/server.h"
#include "metrics/snapshot_builder.h"
#include "page/status_route.h"
#include "support/http_client.h"
#include "support/test_env.h"

namespace seatwatch {
namespace {

metrics::PollState OneInvariant(double violations) {
  metrics::PollState state;
  state.version = "9.9.9";
  state.database_up = true;
  state.last_poll_unix = 1796146810;
  state.last_successful_poll_unix = 1796146810;
  metrics::CheckOutput output;
  metrics::InvariantResult result;
  result.name = "sold_seat_without_ticket";
  result.check = "booking";
  result.violations = {{{{"event_id", "<b>42</b>"}}, violations}};
  output.invariants = {result};
  metrics::CheckStatus check;
  check.name = "booking";
  check.invariants = {"sold_seat_without_ticket"};
  check.has_run = true;
  check.success = true;
  check.output = std::make_shared<const metrics::CheckOutput>(output);
  state.checks.push_back(check);
  return state;
}

TEST(StatusPageRouteTest, EachViewRendersTheCurrentSnapshot) {
  metrics::SnapshotStore store;
  auto status = std::make_shared<cleanup::CleanupStatus>();
  status->enabled = true;
  status->leader = true;
  int port = testing::FreePort();
  http::Server server("127.0.0.1:" + std::to_string(port));
  page::RegisterStatusPage(server, store, [status] {
    return std::shared_ptr<const cleanup::CleanupStatus>(status);
  });
  server.Start();

  auto before = testing::HttpGet(port, "/");
  EXPECT_EQ(before.status, 200);
  EXPECT_NE(before.body.find("<title>seatwatch: UNKNOWN</title>"), std::string::npos)
      << before.body;
  EXPECT_NE(before.body.find("UNKNOWN: no poll yet"), std::string::npos) << before.body;
  EXPECT_NE(before.headers.find("Content-Type: text/html; charset=utf-8\r\n"), std::string::npos)
      << before.headers;
  EXPECT_NE(before.headers.find("Cache-Control: no-store\r\n"), std::string::npos)
      << before.headers;

  store.Publish(std::make_shared<const metrics::Snapshot>(metrics::BuildSnapshot(OneInvariant(2))));
  auto violated = testing::HttpGet(port, "/");
  EXPECT_NE(violated.body.find("<title>seatwatch: VIOLATED</title>"), std::string::npos);
  EXPECT_NE(violated.body.find("<td class=\"mono\">&lt;b&gt;42&lt;/b&gt;</td>"), std::string::npos)
      << violated.body;
  EXPECT_NE(violated.body.find("<span class=\"badge ok\">LEADER</span>"), std::string::npos);

  store.Publish(std::make_shared<const metrics::Snapshot>(metrics::BuildSnapshot(OneInvariant(0))));
  auto repaired = testing::HttpGet(port, "/");
  EXPECT_NE(repaired.body.find("<title>seatwatch: OK</title>"), std::string::npos);
  EXPECT_NE(repaired.body.find("OK: the one invariant holds"), std::string::npos) << repaired.body;

  EXPECT_EQ(testing::HttpGet(port, "/index.html").status, 404);
  server.Stop();
}

}  // namespace
}  // namespace seatwatch
