// The top of the status page: one line per problem (violated invariants with
// their offending keys counted, blocking roots, failing checks), each
// invariant's own help and runbook link, and no section for a feature that
// is not configured.
#include "page/page_summary.h"

#include <gtest/gtest.h>

#include "locks/blocking_forest.h"
#include "metrics/snapshot_builder.h"
#include "page/page_model.h"
#include "support/lock_rows.h"
#include "support/page_states.h"

namespace seatwatch::page {
namespace {

constexpr double kNow = 1796146810;
const char kRunbook[] = "https://github.com/seatwatch/seatwatch/blob/main/docs/runbook.md";

metrics::InvariantResult Invariant(const std::string& name, const std::string& help,
                                  std::vector<metrics::Violation> violations) {
  metrics::InvariantResult result;
  result.name = name;
  result.check = "booking_reconciliation";
  result.help = help;
  result.violations = std::move(violations);
  return result;
}

// sold_seat_without_ticket: 2 rows at event 3; ticket_without_sold_seat: one
// at each of events 5 and 13; fan_over_limit holds.
metrics::CheckStatus Booking() {
  metrics::CheckOutput output;
  output.invariants = {
      Invariant("sold_seat_without_ticket", "A seat is sold but has no ticket",
                {{{{"event_id", "3"}}, 2}}),
      Invariant("ticket_without_sold_seat", "A ticket exists but its seat is not sold",
                {{{{"event_id", "5"}}, 1}, {{{"event_id", "13"}}, 1}}),
      Invariant("fan_over_limit", "A fan has more seats than the limit",
                {{{{"event_id", "1"}}, 0}})};
  output.invariants[0].runbook_url = std::string(kRunbook) + "#sold_seat_without_ticket";
  metrics::CheckStatus check = testing::RanCheck("booking_reconciliation", output, kNow);
  check.invariants = {"sold_seat_without_ticket", "ticket_without_sold_seat", "fan_over_limit"};
  return check;
}

// 4242 idle in transaction blocks 4243 and 4244; 5000 blocks 5001.
std::shared_ptr<const locks::LockPoll> TwoRoots() {
  auto poll = std::make_shared<locks::LockPoll>();
  poll->sessions[4242] = testing::ClientSession(4242, "idle in transaction", 95, 80);
  for (int pid : {4243, 4244, 5000, 5001}) {
    poll->sessions[pid] = testing::ClientSession(pid, "active", 10, 10);
  }
  poll->waits[4243] = testing::LockWait(4243, "transactionid", {4242}, 7.5);
  poll->waits[4244] = testing::LockWait(4244, "tuple", {4243}, 6);
  poll->waits[5001] = testing::LockWait(5001, "transactionid", {5000}, 1);
  poll->forest = locks::BuildForest(locks::ToWaiters(poll->waits), {4242, 4243, 4244, 5000, 5001});
  return poll;
}

metrics::PollState ProblemState() {
  metrics::PollState state = testing::PageState(kNow);
  state.checks.push_back(Booking());
  state.checks.push_back(testing::RanCheck("locks", testing::LocksOutput(TwoRoots()), kNow));
  metrics::CheckStatus holds;
  holds.name = "holds";
  holds.has_run = true;
  holds.last_reason = "timeout";
  holds.last_error = "canceling statement due to statement timeout";
  state.checks.push_back(holds);
  return state;
}

std::shared_ptr<const cleanup::CleanupStatus> CleanupOff() {
  return std::make_shared<const cleanup::CleanupStatus>();
}

bool Has(const std::string& page, const std::string& text) {
  return page.find(text) != std::string::npos;
}

TEST(PageSummaryTest, OneLinePerProblemMostUrgentFirst) {
  PageModel model = BuildPageModel(metrics::BuildSnapshot(ProblemState()), nullptr, kNow);
  std::vector<SummaryLine> lines = SummarizeProblems(model);
  std::vector<std::string> texts;
  for (const auto& line : lines) texts.push_back(line.text);
  EXPECT_EQ(texts, (std::vector<std::string>{
                       "sold_seat_without_ticket: 1 event (2 offending rows)",
                       "ticket_without_sold_seat: 2 events",
                       "2 sessions blocked by pid 4242 (idle in transaction)",
                       "1 session blocked by pid 5000 (active)",
                       "check holds failing: timeout",
                   }));
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0].anchor, "invariant-sold_seat_without_ticket");
  EXPECT_EQ(lines[2].anchor, "locks");
  EXPECT_EQ(lines[4].anchor, "checks");
}

TEST(PageSummaryTest, TheSummaryOpensThePageAndLinksToEachProblem) {
  std::string page = testing::RenderPage(ProblemState(), CleanupOff(), kNow);
  size_t summary = page.find("<section id=\"summary\">");
  ASSERT_NE(summary, std::string::npos) << page;
  EXPECT_LT(page.find("id=\"verdict\""), summary);
  EXPECT_LT(summary, page.find("id=\"invariants\""));
  EXPECT_TRUE(Has(page,
                  "<li><a href=\"#invariant-sold_seat_without_ticket\">sold_seat_without_ticket: 1 "
                  "event (2 offending rows)</a></li>"))
      << page;
  EXPECT_TRUE(Has(page,
                  "<li><a href=\"#locks\">2 sessions blocked by pid 4242 (idle in "
                  "transaction)</a></li>"))
      << page;
}

TEST(PageSummaryTest, NoSummaryWhenNothingNeedsAPerson) {
  metrics::PollState state = testing::PageState(kNow);
  metrics::CheckOutput output;
  output.invariants = {Invariant("fan_over_limit", "", {{{{"event_id", "1"}}, 0}})};
  metrics::CheckStatus check = testing::RanCheck("booking_reconciliation", output, kNow);
  check.invariants = {"fan_over_limit"};
  state.checks.push_back(check);
  state.checks.push_back(testing::RanCheck(
      "locks", testing::LocksOutput(std::make_shared<const locks::LockPoll>()), kNow));
  std::string page = testing::RenderPage(state, CleanupOff(), kNow);
  EXPECT_TRUE(Has(page, "<h1>OK: the one invariant holds</h1>")) << page;
  EXPECT_FALSE(Has(page, "id=\"summary\"")) << page;
}

TEST(PageSummaryTest, KeysAreNamedByTheirLabel) {
  EXPECT_EQ(KeyNoun({{{{"workshop_id", "1"}}, 1}}, 1), "1 workshop");
  EXPECT_EQ(KeyNoun({{{{"event_id", "1"}}, 1}, {{{"event_id", "2"}}, 1}}, 25), "25 events");
  EXPECT_EQ(KeyNoun({{{{"event_id", "1"}, {"kind", "x"}}, 1}}, 1), "1 key");
  EXPECT_EQ(KeyNoun({{{{"kind", "x"}}, 1}}, 2), "2 keys");
  EXPECT_EQ(KeyNoun({{{{"_id", "x"}}, 1}}, 2), "2 keys");
  EXPECT_EQ(KeyNoun({}, 0), "0 keys");
}

TEST(PageSummaryTest, EachInvariantItsOwnHelpAndRunbookLink) {
  std::string page = testing::RenderPage(ProblemState(), CleanupOff(), kNow);
  size_t sold =
      page.find("<article class=\"card violated\" id=\"invariant-sold_seat_without_ticket\"");
  size_t ticket =
      page.find("<article class=\"card violated\" id=\"invariant-ticket_without_sold_seat\"");
  ASSERT_NE(sold, std::string::npos) << page;
  ASSERT_NE(ticket, std::string::npos) << page;
  std::string sold_card = page.substr(sold, page.find("</article>", sold) - sold);
  std::string ticket_card = page.substr(ticket, page.find("</article>", ticket) - ticket);
  EXPECT_TRUE(Has(sold_card, "<p>A seat is sold but has no ticket</p>")) << sold_card;
  EXPECT_TRUE(Has(ticket_card, "<p>A ticket exists but its seat is not sold</p>")) << ticket_card;
  EXPECT_TRUE(Has(sold_card,
                  " &middot; check booking_reconciliation &middot; <a class=\"runbook\" "
                  "rel=\"noopener noreferrer\" href=\"" +
                      std::string(kRunbook) + "#sold_seat_without_ticket\">runbook</a></p>"))
      << sold_card;
  EXPECT_FALSE(Has(ticket_card, "runbook")) << ticket_card;  // none configured for it
}

TEST(PageSummaryTest, ARunbookLinkIsEscaped) {
  metrics::PollState state = ProblemState();
  metrics::CheckOutput output = *state.checks[0].output;
  output.invariants[0].runbook_url = "https://wiki.example.com/a?b=1&c=\"2\"";
  state.checks[0].output = std::make_shared<const metrics::CheckOutput>(output);
  std::string page = testing::RenderPage(state, CleanupOff(), kNow);
  EXPECT_TRUE(Has(page, "href=\"https://wiki.example.com/a?b=1&amp;c=&quot;2&quot;\"")) << page;
}

TEST(PageSummaryTest, FeaturesNotConfiguredHaveNoSection) {
  metrics::PollState state = testing::PageState(kNow);
  state.checks.push_back(Booking());  // no locks check, no holds check
  std::string page = testing::RenderPage(state, CleanupOff(), kNow);
  for (const char* absent : {"id=\"locks\"", "id=\"holds\"", "No lock data", "No holds data",
                             "<h3>Cleanup</h3>", "Cleanup is"}) {
    EXPECT_FALSE(Has(page, absent)) << absent << "\n" << page;
  }
  EXPECT_TRUE(Has(page, "id=\"checks\"")) << page;

  // The cleanup on without [holds]: the section holds the cleanup alone.
  cleanup::CleanupStatus on;
  on.enabled = true;
  on.leader = true;
  page = testing::RenderPage(state, std::make_shared<const cleanup::CleanupStatus>(on), kNow);
  EXPECT_TRUE(Has(page, "<section id=\"holds\"><h2>Holds and cleanup</h2>\n<h3>Cleanup</h3>"))
      << page;
  EXPECT_FALSE(Has(page, "No holds data")) << page;
}

}  // namespace
}  // namespace seatwatch::page
