// The status page's "Database servers" section: each lane's server (primary
// or standby), its replay lag and timeline, the failovers seen, "not
// connected" without servers, and the cleanup waiting on a standby. Every
// string escaped.
#include <gtest/gtest.h>

#include <string>

#include "metrics/snapshot_builder.h"
#include "page/page_model.h"
#include "page/page_renderer.h"
#include "support/page_states.h"

namespace seatwatch::page {
namespace {

constexpr double kNow = 1796146810;

metrics::LaneServer Server(const std::string& lane, bool in_recovery, double lag,
                           std::uint32_t timeline,
                           const std::string& sysid = "7312345678901234567") {
  metrics::LaneServer server;
  server.lane = lane;
  server.facts.in_recovery = in_recovery;
  server.facts.replica_lag_seconds = lag;
  server.facts.timeline = timeline;
  server.facts.system_identifier = sysid;
  return server;
}

metrics::PollState State() { return testing::PageState(kNow); }

std::string RenderOf(const metrics::PollState& state,
                     std::shared_ptr<const cleanup::CleanupStatus> cleanup = nullptr) {
  return testing::RenderPage(state, std::move(cleanup), kNow);
}

// The section alone, from its heading to its end.
std::string Section(const std::string& page) {
  size_t start = page.find("<section id=\"servers\">");
  if (start == std::string::npos) return "";
  size_t end = page.find("</section>", start);
  return page.substr(start, end - start);
}

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(PageServersTest, ModelTakesTheServersAndFailoversFromTheState) {
  metrics::PollState state = State();
  state.servers = {Server("checks", true, 0.4, 2), Server("locks", false, 0, 2)};
  state.failovers_total = 1;
  PageModel model = BuildPageModel(metrics::BuildSnapshot(state), nullptr, kNow);
  ASSERT_EQ(model.servers.size(), 2u);
  EXPECT_EQ(model.servers[0].lane, "checks");
  EXPECT_TRUE(model.servers[0].facts.in_recovery);
  EXPECT_EQ(model.servers[1].lane, "locks");
  EXPECT_EQ(model.failovers_total, 1u);
}

TEST(PageServersTest, EachLaneWithItsServerLagAndTimeline) {
  metrics::PollState state = State();
  state.servers = {Server("checks", true, 0.4, 2), Server("locks", false, 0, 2)};
  state.failovers_total = 3;
  std::string section = Section(RenderOf(state));
  ASSERT_FALSE(section.empty());
  testing::ExpectPageParts(
      section,
      {"<h2>Database servers</h2>",
       "<tr><td><code>checks</code></td><td><span class=\"badge unknown\">STANDBY</span> in "
       "recovery</td><td><strong>0.4s</strong> behind</td><td class=\"num\">2</td><td><code>"
       "7312345678901234567</code></td></tr>"});
  EXPECT_TRUE(Has(
      section,
      "<tr><td><code>locks</code></td><td><span class=\"badge ok\">PRIMARY</span></td><td><span "
      "class=\"meta\">none (a primary)</span></td><td class=\"num\">2</td>"))
      << section;
  testing::ExpectPageParts(section, {"Failovers seen since start: <strong>3</strong>"},
                           {"Not connected"});
  // In lane order, checks first.
  EXPECT_LT(section.find("<code>checks</code>"), section.find("<code>locks</code>"));
}

TEST(PageServersTest, ACaughtUpStandbyAndUnknownIdentity) {
  metrics::PollState state = State();
  state.servers = {Server("checks", true, 0, 0, "")};
  std::string section = Section(RenderOf(state));
  testing::ExpectPageParts(section,
                           {"<td>0.0s <span class=\"meta\">caught up</span></td>",
                            "<td class=\"num\"><span class=\"meta\">unknown</span></td><td><span "
                            "class=\"meta\">unknown</span></td>",
                            "Failovers seen since start: <strong>0</strong>"});
}

TEST(PageServersTest, TheLocksLaneOnAStandbyIsFlagged) {
  metrics::PollState state = State();
  state.servers = {Server("checks", true, 1, 1), Server("locks", true, 1, 1)};
  std::string section = Section(RenderOf(state));
  size_t locks = section.find("<code>locks</code>");
  ASSERT_NE(locks, std::string::npos) << section;
  EXPECT_EQ(section.find("this lane needs the primary"),
            section.find("this lane needs the primary", locks))
      << "only the locks lane is flagged:\n"
      << section;
  EXPECT_TRUE(Has(section.substr(locks), "this lane needs the primary")) << section;
}

TEST(PageServersTest, NoServersSayNotConnected) {
  metrics::PollState state = State();
  state.database_up = false;
  std::string section = Section(RenderOf(state));
  testing::ExpectPageParts(section,
                           {"Not connected: no lane reached its database server on its last poll."},
                           {"<table"});
  // Before the first poll too, without a failover count.
  std::string before =
      Section(RenderStatusPage(BuildPageModel(metrics::Snapshot{}, nullptr, kNow)));
  EXPECT_TRUE(Has(before, "Not connected")) << before;
  EXPECT_FALSE(Has(before, "Failovers")) << before;
}

TEST(PageServersTest, StringsAreEscaped) {
  metrics::PollState state = State();
  state.servers = {Server("<b>lane</b>", false, 0, 1, "<script>alert(1)</script>")};
  std::string section = Section(RenderOf(state));
  testing::ExpectPageParts(section,
                           {"&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;b&gt;lane&lt;/b&gt;"},
                           {"<script>", "<b>lane"});
}

TEST(PageServersTest, TheCleanupWaitingOnAStandbySaysSo) {
  cleanup::CleanupStatus status;
  status.enabled = true;
  status.in_recovery = true;
  status.interval_seconds = 30;
  std::string page = RenderOf(State(), std::make_shared<const cleanup::CleanupStatus>(status));
  testing::ExpectPageParts(
      page,
      {"<span class=\"badge warn\">WAITING</span> its connection reaches a standby (in "
       "recovery): it frees nothing until that server is promoted or [database] dsn reaches "
       "the primary"},
      {"another instance holds the leader lock"});
}

}  // namespace
}  // namespace seatwatch::page
