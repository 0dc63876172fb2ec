// The status page rendered from a hand-built snapshot: the verdict, the
// offending keys and detail rows, the blocking tree, the holds and cleanup,
// each check's health, and every string from the database escaped.
#include <gtest/gtest.h>

#include <set>

#include "locks/blocking_forest.h"
#include "locks/lock_poll.h"
#include "metrics/snapshot_builder.h"
#include "metrics/violation_lifecycle.h"
#include "page/page_model.h"
#include "page/page_renderer.h"
#include "support/lock_rows.h"
#include "support/page_states.h"

namespace seatwatch::page {
namespace {

constexpr double kSince = 1796146810;  // 2026-12-01 17:40:10 UTC
constexpr double kNow = kSince + 192;  // 3m 12s later
const char kAlert[] = "<script>alert(1)</script>";
const char kRetitle[] = "<script>document.title='pwned'</script>";

locks::SessionRow Session(int pid, const std::string& state, const std::string& app) {
  locks::SessionRow session = testing::ClientSession(pid, state, 95, 80);
  session.application_name = app;
  session.query = "UPDATE seats SET status = $1 WHERE seat = $2";
  return session;
}

// 4242 idle in transaction (its application_name a script) holds seat A1 of
// event 1; 4243 waits for its transaction, 4244 queues for the row.
std::shared_ptr<const locks::LockPoll> HotSeatPoll() {
  auto poll = std::make_shared<locks::LockPoll>();
  poll->sessions[4242] = Session(4242, "idle in transaction", kRetitle);
  poll->sessions[4243] = Session(4243, "active", "booking-api");
  poll->sessions[4244] = Session(4244, "active", "booking-api");
  poll->waits[4243] = testing::LockWait(4243, "transactionid", {4242}, 7.5);
  poll->waits[4244] = testing::LockWait(4244, "tuple", {4243}, 6);
  poll->forest = locks::BuildForest(locks::ToWaiters(poll->waits), {4242, 4243, 4244});
  poll->rows[poll->forest.rows.at(0).target] = "seats(event_id=1, seat=A1)";
  poll->timestamp_seconds = kNow - 1;
  return poll;
}

metrics::CheckStatus Ran(const std::string& name, metrics::CheckOutput output) {
  return testing::RanCheck(name, std::move(output), kNow);
}

metrics::PollState ViolatedState() {
  metrics::PollState state = testing::PageState(kNow);

  metrics::CheckOutput booking;
  metrics::InvariantResult sold;
  sold.name = "sold_seat_without_ticket";
  sold.check = "booking_reconciliation";
  sold.help = "Seats sold, tickets issued & payments confirmed must agree";
  sold.violations = {{{{"event_id", "3"}}, 1}, {{{"event_id", "1"}}, 0}};
  metrics::DetailRows detail;
  detail.columns = {"event_id", "seat", "status", "holder", "payments"};
  detail.rows = {{std::string("3"), std::string("A7"), std::string("sold"), std::string(kAlert),
                  std::nullopt}};
  sold.detail = detail;
  metrics::InvariantResult limit;
  limit.name = "fan_over_limit";
  limit.check = "booking_reconciliation";
  limit.violations = {{{{"event_id", "3"}}, 0}};
  booking.invariants = {sold, limit};
  metrics::CheckStatus reconciliation = Ran("booking_reconciliation", booking);
  reconciliation.invariants = {"sold_seat_without_ticket", "fan_over_limit"};
  state.checks.push_back(reconciliation);
  state.history["sold_seat_without_ticket"] = {false, kSince};
  state.history["fan_over_limit"] = {true, kSince - 3600};
  // Event 5 was violated for ten minutes before event 3 broke.
  metrics::ViolationLifecycle lifecycle(kSince - 7200);
  metrics::InvariantResult earlier = sold;
  earlier.violations = {{{{"event_id", "5"}}, 2}};
  lifecycle.Observe("booking_reconciliation", {earlier}, kSince - 600);
  lifecycle.Observe("booking_reconciliation", {sold, limit}, kSince);
  state.lifecycles = {lifecycle.State()};

  state.checks.push_back(Ran("locks", testing::LocksOutput(HotSeatPoll())));
  state.checks.push_back(Ran("holds", testing::HoldsOutput({7, 3, 125.5, 2})));

  metrics::CheckStatus inventory;
  inventory.name = "event_inventory";
  inventory.interval_seconds = 10;
  inventory.has_run = true;
  inventory.success = false;
  inventory.last_success_unix = kSince;
  inventory.errors = {{"timeout", 2}, {"sql", 0}};
  inventory.last_reason = "timeout";
  inventory.last_error = "canceling statement due to statement timeout";
  state.checks.push_back(inventory);
  return state;
}

std::shared_ptr<const cleanup::CleanupStatus> Leader() {
  cleanup::CleanupStatus status;
  status.enabled = true;
  status.leader = true;
  status.interval_seconds = 30;
  status.freed = 12;
  status.batches_ok = 4;
  status.batches_lock_timeout = 1;
  status.last_success_unix = kNow - 20;
  status.last_run_unix = kNow - 20;
  status.last_run_result = "ok";
  status.last_run_freed = 3;
  return std::make_shared<const cleanup::CleanupStatus>(status);
}

std::string RenderOf(const metrics::PollState& state,
                     std::shared_ptr<const cleanup::CleanupStatus> cleanup) {
  return testing::RenderPage(state, std::move(cleanup), kNow);
}

bool Has(const std::string& page, const std::string& text) {
  return page.find(text) != std::string::npos;
}

TEST(StatusPageTest, VerdictFirstWithTheOffendingKeysAndRows) {
  std::string page = RenderOf(ViolatedState(), Leader());
  testing::ExpectPageParts(
      page, {"<title>seatwatch: VIOLATED</title>", "<h1>VIOLATED: 1 of 2 invariants</h1>",
             "database reachable &middot; last poll 2026-12-01 17:43:21 UTC (1.0s ago)"});
  // The verdict comes before the forest, the forest before the checks.
  EXPECT_LT(page.find("id=\"verdict\""), page.find("id=\"locks\""));
  EXPECT_LT(page.find("id=\"locks\""), page.find("id=\"holds\""));
  EXPECT_LT(page.find("id=\"holds\""), page.find("id=\"checks\""));
  testing::ExpectPageParts(
      page, {"<span class=\"badge violated\">VIOLATED</span> <span "
             "class=\"name\">sold_seat_without_ticket</span>",
             "violated since 2026-12-01 17:40:10 UTC (3m 12s ago) &middot; 1 offending "
             "row across 1 key &middot; check booking_reconciliation",
             "Seats sold, tickets issued &amp; payments confirmed must agree"});
  // The key (event 3), not the key the query reported as fine (event 1).
  testing::ExpectPageParts(
      page,
      {"<tr><th>event_id</th><th>offending</th><th>violated since</th></tr>\n<tr><td "
       "class=\"mono\">3</td><td class=\"num\">1</td><td class=\"meta\">2026-12-01 17:40:10 "
       "UTC (3m 12s ago)</td></tr>\n</table>",
       "<h3>Recently healed</h3>",
       "<tr><td>sold_seat_without_ticket</td><td class=\"mono\">event_id=5</td><td>2026-12-01 "
       "17:30:10 UTC</td><td class=\"num\">10m 00s</td></tr>",
       "as seen by this process since 2026-12-01 15:40:10 UTC; a restart starts the list afresh.",
       "<td class=\"mono\">A7</td><td class=\"mono\">sold</td>", "<td class=\"meta\">NULL</td>",
       "<span class=\"badge ok\">OK</span> fan_over_limit <span "
       "class=\"meta\">since 2026-12-01 16:40:10 UTC (1h 03m ago)</span>"});
}

TEST(StatusPageTest, DatabaseStringsAreEscaped) {
  std::string page = RenderOf(ViolatedState(), Leader());
  testing::ExpectPageParts(page,
                           {"<td class=\"mono\">&lt;script&gt;alert(1)&lt;/script&gt;</td>",
                            "(&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt; "
                            "booking@local)"},
                           {"<script", "pwned'"});
  // Self-contained: nothing loaded from elsewhere, nothing run.
  testing::ExpectPageParts(page, {}, {"src=", "http://", "https://", "<link"});
}

TEST(StatusPageTest, RefreshesAndFitsAPhone) {
  std::string page = RenderOf(ViolatedState(), Leader());
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  testing::ExpectPageParts(
      page, {"<meta http-equiv=\"refresh\" content=\"5\">",
             "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
             "<meta charset=\"utf-8\">", "<style>"});
  for (const char* link :
       {"<a href=\"/metrics\">/metrics</a>", "<a href=\"/api/invariants\">/api/invariants</a>",
        "<a href=\"/api/locks\">/api/locks</a>"}) {
    EXPECT_TRUE(Has(page.substr(page.find("<footer>")), link)) << link;
  }
}

TEST(StatusPageTest, BlockingForestAsATree) {
  std::string page = RenderOf(ViolatedState(), Leader());
  testing::ExpectPageParts(
      page, {"<strong>2 waiting</strong>, longest 7.5s, deepest chain 1, most behind "
             "one root 2",
             "<div class=\"node root\"><strong>root pid <span "
             "class=\"pid\">4242</span></strong> <span class=\"state idle\">idle in "
             "transaction for 1m 20s</span> &middot; transaction open 1m 35s",
             "holds up 2 (2 directly)"});
  // Both waiters are drawn beneath the root, one level in, with the hot row.
  size_t root = page.find("root pid <span class=\"pid\">4242");
  size_t nested = page.find("<ul><li><div class=\"node\"><strong>pid <span class=\"pid\">4243");
  ASSERT_NE(nested, std::string::npos) << page;
  EXPECT_LT(root, nested);
  testing::ExpectPageParts(
      page, {"<strong>pid <span class=\"pid\">4243</span></strong> waits "
             "<strong>7.5s</strong> &middot; transactionid ShareLock on seats &middot; "
             "row <code class=\"row\">seats(event_id=1, seat=A1)</code>",
             "<strong>pid <span class=\"pid\">4244</span></strong> waits "
             "<strong>6.0s</strong> &middot; tuple ExclusiveLock on seats",
             "<td><code class=\"row\">seats(event_id=1, seat=A1)</code></td><td "
             "class=\"num\">2</td>",
             "<code>UPDATE seats SET status = $1 WHERE seat = $2</code>"});
}

TEST(StatusPageTest, HoldsCleanupAndCheckHealth) {
  std::string page = RenderOf(ViolatedState(), Leader());
  testing::ExpectPageParts(
      page,
      {"<tr><th>expired holds (backlog)</th><td><strong>3</strong> (the oldest "
       "expired 2m 05s ago)</td></tr>",
       "<tr><th>active holds</th><td>7</td></tr>", "<tr><th>payments lapsed</th><td>2</td></tr>",
       "<span class=\"badge ok\">LEADER</span>",
       "<tr><th>last run</th><td>2026-12-01 17:43:02 UTC (20.0s ago): <span "
       "class=\"badge ok\">ok</span>, freed 3</td></tr>",
       "<tr><th>batches</th><td>ok 4, lock_timeout 1, error 0</td></tr>",
       "<tr><th>freed since start</th><td>12</td></tr>",
       "<tr><td><code>event_inventory</code></td><td><span class=\"badge "
       "violated\">failed</span> timeout<br><span class=\"err\">canceling "
       "statement due to statement timeout</span></td><td>2026-12-01 17:40:10 "
       "UTC (3m 12s ago)</td>",
       "<td>timeout 2</td>",
       "<tr><td><code>locks</code></td><td><span class=\"badge ok\">ok</span>"},
      {"DRY RUN"});
}

TEST(StatusPageTest, ADryRunSaysWhatItWouldHaveFreed) {
  cleanup::CleanupStatus status = *Leader();
  status.dry_run = true;
  std::string page =
      RenderOf(ViolatedState(), std::make_shared<const cleanup::CleanupStatus>(status));
  testing::ExpectPageParts(page,
                           {"<span class=\"badge warn\">DRY RUN</span>",
                            "<span class=\"badge ok\">ok</span>, would have freed 3</td></tr>",
                            "<tr><th>would have freed since start</th><td>12</td></tr>"});
}

TEST(StatusPageTest, AllOkAndNothingWaiting) {
  metrics::PollState state = ViolatedState();
  metrics::CheckOutput booking = *state.checks[0].output;
  booking.invariants[0].violations = {{{{"event_id", "3"}}, 0}};
  state.checks[0].output = std::make_shared<const metrics::CheckOutput>(booking);
  state.checks[1].output = std::make_shared<const metrics::CheckOutput>(
      testing::LocksOutput(std::make_shared<const locks::LockPoll>()));
  std::string page = RenderOf(state, nullptr);
  testing::ExpectPageParts(page,
                           {"<title>seatwatch: OK</title>", "<h1>OK: all 2 invariants hold</h1>",
                            "No session waits on a lock.", "The cleanup's status is not known."},
                           {"VIOLATED"});
}

TEST(StatusPageTest, FailingChecksGiveUnknownWithTheReason) {
  metrics::PollState state = ViolatedState();
  state.database_up = false;
  for (auto& check : state.checks) {
    check.success = false;
    check.output.reset();
    check.last_reason = "connection";
    check.last_error = "could not connect to server";
  }
  cleanup::CleanupStatus off;
  std::string page = RenderOf(state, std::make_shared<const cleanup::CleanupStatus>(off));
  testing::ExpectPageParts(
      page,
      {"<title>seatwatch: UNKNOWN</title>", "<h1>UNKNOWN: 2 of 2 invariants without a verdict</h1>",
       "<strong>database UNREACHABLE</strong>",
       "check booking_reconciliation failed: connection: could not connect to "
       "server",
       "No lock data: the last run failed: connection: could not connect to "
       "server"});
  // The cleanup is off (not configured): its part is left out, the holds
  // check (configured, failing) stays.
  testing::ExpectPageParts(page, {"No holds data: the last run failed: connection"},
                           {"<h3>Cleanup</h3>"});
}

TEST(StatusPageTest, BeforeTheFirstPoll) {
  PageModel model = BuildPageModel(metrics::Snapshot{}, nullptr, kNow);
  std::string page = RenderStatusPage(model);
  testing::ExpectPageParts(page,
                           {"<title>seatwatch: UNKNOWN</title>", "<h1>UNKNOWN: no poll yet</h1>"});
  // Nothing is known to be configured yet: no locks, holds or cleanup part.
  for (const char* id : {"id=\"locks\"", "id=\"holds\"", "id=\"summary\""}) {
    EXPECT_FALSE(Has(page, id)) << id << "\n" << page;
  }
}

TEST(StatusPageTest, LongListsAreCutAndCounted) {
  metrics::PollState state = ViolatedState();
  metrics::CheckOutput booking = *state.checks[0].output;
  booking.invariants[0].violations.clear();
  for (int event = 1; event <= 25; ++event) {
    booking.invariants[0].violations.push_back({{{"event_id", std::to_string(event)}}, 2});
  }
  booking.invariants[0].detail->rows.assign(40, booking.invariants[0].detail->rows[0]);
  state.checks[0].output = std::make_shared<const metrics::CheckOutput>(booking);
  PageModel model = BuildPageModel(metrics::BuildSnapshot(state), nullptr, kNow);
  ASSERT_EQ(model.invariants[0].first_keys.size(), kShownKeys);
  EXPECT_EQ(model.invariants[0].rows, 25u);
  EXPECT_EQ(model.invariants[0].detail->rows.size(), kShownDetailRows);
  EXPECT_TRUE(model.invariants[0].detail->truncated);
  std::string page = RenderStatusPage(model);
  testing::ExpectPageParts(page, {"50 offending rows across 25 keys",
                                  "and 15 more keys: see <a href=\"/api/invariants\">"});
}

// An incremental check in full mode says why when the feed said (its
// publication no longer covers a watched table), in the page and the API.
TEST(StatusPageTest, AnIncrementalCheckSaysWhyItRunsFullPasses) {
  metrics::PollState state = ViolatedState();
  metrics::IncrementalStatus status;
  status.mode = "full";
  status.mode_reason = "coverage lost: table public.tickets is not in publication seatwatch";
  state.checks[0].incremental = status;
  metrics::Snapshot snapshot = metrics::BuildSnapshot(state);
  std::string page = RenderStatusPage(BuildPageModel(snapshot, nullptr, kNow));
  EXPECT_TRUE(Has(page,
                  "full (coverage lost: table public.tickets is not in publication "
                  "seatwatch)"))
      << page;
  EXPECT_TRUE(Has(snapshot.invariants_json,
                  "\"mode_reason\":\"coverage lost: table public.tickets is not in "
                  "publication seatwatch\""))
      << snapshot.invariants_json;
}

metrics::PollState WithLocks(std::shared_ptr<const locks::LockPoll> poll) {
  metrics::PollState state = ViolatedState();
  state.checks[1].output =
      std::make_shared<const metrics::CheckOutput>(testing::LocksOutput(std::move(poll)));
  return state;
}

TEST(StatusPageTest, CyclesAndEndedBlockersAreShownApart) {
  auto poll = std::make_shared<locks::LockPoll>();
  for (int pid : {501, 502, 601}) poll->sessions[pid] = Session(pid, "active", "booking-api");
  poll->waits[501] = testing::LockWait(501, "transactionid", {502}, 3);
  poll->waits[502] = testing::LockWait(502, "transactionid", {501}, 2);
  // 999 ended before the read.
  poll->waits[601] = testing::LockWait(601, "transactionid", {999}, 4);
  poll->forest = locks::BuildForest(locks::ToWaiters(poll->waits), {501, 502, 601});
  ASSERT_EQ(poll->forest.cycles.size(), 1u);
  ASSERT_EQ(poll->forest.unattributed.size(), 1u);
  std::string page = RenderOf(WithLocks(poll), nullptr);
  testing::ExpectPageParts(page,
                           {"<h3>Wait cycle (a deadlock not yet detected): 501 502</h3>",
                            "<h3>Waiting, blocker ended meanwhile</h3>",
                            "pid <span class=\"pid\">601</span></strong> waits <strong>4.0s"});
}

TEST(StatusPageTest, AHugePileUpIsDrawnUpToTheCap) {
  auto poll = std::make_shared<locks::LockPoll>();
  poll->sessions[1] = Session(1, "idle in transaction", "batch-job");
  std::set<int> live = {1};
  for (int pid = 2; pid <= 251; ++pid) {
    poll->sessions[pid] = Session(pid, "active", "booking-api");
    poll->waits[pid] = testing::LockWait(pid, "transactionid", {1}, 1);
    live.insert(pid);
  }
  poll->forest = locks::BuildForest(locks::ToWaiters(poll->waits), live);
  std::string page = RenderOf(WithLocks(poll), nullptr);
  testing::ExpectPageParts(
      page,
      {"holds up 250 (250 directly)", "pid <span class=\"pid\">200</span>",
       "51 more sessions not drawn: see <a href=\"/api/locks\">/api/locks</a>"},
      {"pid <span class=\"pid\">201</span>"});
  EXPECT_LT(page.size(), 200u << 10);
}

}  // namespace
}  // namespace seatwatch::page
