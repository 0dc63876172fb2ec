#include <algorithm>

#include "locks/locks_report.h"
#include "page/page_format.h"
#include "page/page_sections.h"

namespace seatwatch::page::detail {

namespace {

bool IsIdleInTransaction(const std::string& state) {
  return state.rfind("idle in transaction", 0) == 0;
}

bool IsRoot(const locks::LockPoll& poll, int pid) {
  const auto& roots = poll.forest.roots;
  return std::find(roots.begin(), roots.end(), pid) != roots.end();
}

// One session of the tree: a waiter says what it waits for and how long; a
// blocker says its state and for how long (idle in transaction: the usual
// culprit), then its open transaction.
void RenderSession(std::string& out, const locks::LockPoll& poll, int pid) {
  const locks::SessionRow* session = poll.Session(pid);
  const locks::LockWaitRow* wait = poll.Wait(pid);
  bool root = IsRoot(poll, pid);
  out += root ? "<div class=\"node root\">" : "<div class=\"node\">";
  out += root ? "<strong>root pid <span class=\"pid\">" : "<strong>pid <span class=\"pid\">";
  out += std::to_string(pid) + "</span></strong> ";
  if (wait) {
    out += "waits <strong>" + E(FormatAge(poll.WaitSeconds(pid))) + "</strong> &middot; " +
           E(wait->locktype) + " " + E(wait->mode);
    std::string relation = poll.RelationOf(pid);
    if (!relation.empty()) out += " on " + E(relation);
  } else {
    std::string state = poll.StateOf(pid);
    out += IsIdleInTransaction(state) ? "<span class=\"state idle\">" : "<span class=\"state\">";
    out += E(state);
    if (session && session->state_age_seconds) {
      out += " for " + E(FormatAge(*session->state_age_seconds));
    }
    out += "</span>";
    if (session && session->xact_age_seconds) {
      out += " &middot; transaction open " + E(FormatAge(*session->xact_age_seconds));
    }
  }
  std::string row = poll.HotRowOf(pid);
  if (!row.empty()) out += " &middot; row <code class=\"row\">" + E(row) + "</code>";
  if (session) out += " <span class=\"meta\">" + E(locks::SessionWho(*session)) + "</span>";
  if (root) {
    const locks::ForestNode& node = poll.forest.nodes.at(pid);
    out += "<br><span class=\"meta\">holds up " + std::to_string(node.blocked_total) + " (" +
           std::to_string(node.blocked_directly) + " directly)</span>";
  }
  if (session && session->query && !session->query->empty()) {
    out += "<div class=\"query\"><code>" + E(*session->query) + "</code></div>";
  }
  out += "</div>";
}

// The session and, indented beneath it, the sessions drawn under it; at most
// `budget` sessions in all (the rest are counted by the caller).
void RenderTree(std::string& out, const locks::LockPoll& poll, int pid, size_t& budget) {
  if (budget == 0) return;
  --budget;
  out += "<li>";
  RenderSession(out, poll, pid);
  const locks::ForestNode& node = poll.forest.nodes.at(pid);
  if (!node.children.empty() && budget > 0) {
    out += "\n<ul>";
    for (int child : node.children) RenderTree(out, poll, child, budget);
    out += "</ul>";
  }
  out += "</li>\n";
}

void RenderHotRows(std::string& out, const locks::LockPoll& poll) {
  if (poll.forest.rows.empty()) return;
  out +=
      "<h3>Hot rows</h3>\n<div class=\"scroll\"><table class=\"hotrows\"><tr><th>row</th>"
      "<th>sessions queued</th></tr>\n";
  size_t shown = 0;
  for (const auto& queue : poll.forest.rows) {
    if (++shown > kShownKeys) break;
    auto name = poll.rows.find(queue.target);
    out += "<tr><td><code class=\"row\">" +
           E(name == poll.rows.end() ? queue.target : name->second) +
           "</code></td><td class=\"num\">" + std::to_string(queue.size()) + "</td></tr>\n";
  }
  out += "</table></div>\n";
}

}  // namespace

void RenderLocks(std::string& out, const PageModel& model) {
  if (!model.locks_source.configured) return;  // [locks] enabled = false
  out += "<section id=\"locks\"><h2>Blocking</h2>\n";
  if (!model.locks) {
    out +=
        "<p class=\"meta\">No lock data: " + E(model.locks_source.unavailable) + "</p></section>\n";
    return;
  }
  const locks::LockPoll& poll = *model.locks;
  if (poll.timestamp_seconds > 0) {
    out += "<p class=\"meta\">as of " + E(FormatWhen(poll.timestamp_seconds, model.now_unix)) +
           "</p>\n";
  }
  if (poll.waits.empty()) {
    out += "<p>No session waits on a lock.</p></section>\n";
    return;
  }
  out += "<p><strong>" + std::to_string(poll.waits.size()) + " waiting</strong>, longest " +
         E(FormatAge(poll.MaxWaitSeconds())) + ", deepest chain " +
         std::to_string(poll.forest.max_depth) + ", most behind one root " +
         std::to_string(poll.forest.max_blocked_by_one_root) + "</p>\n";
  size_t budget = kShownSessions;
  out += "<ul class=\"tree\">\n";
  for (int pid : poll.forest.roots) RenderTree(out, poll, pid, budget);
  out += "</ul>\n";
  for (const auto& cycle : poll.forest.cycles) {
    out += "<h3>Wait cycle (a deadlock not yet detected):";
    for (int pid : cycle.pids) out += " " + std::to_string(pid);
    out += "</h3>\n<ul class=\"tree\">\n";
    for (int pid : cycle.pids) {
      if (poll.forest.nodes.at(pid).parent < 0) RenderTree(out, poll, pid, budget);
    }
    out += "</ul>\n";
  }
  if (!poll.forest.unattributed.empty()) {
    out += "<h3>Waiting, blocker ended meanwhile</h3>\n<ul class=\"tree\">\n";
    for (int pid : poll.forest.unattributed) RenderTree(out, poll, pid, budget);
    out += "</ul>\n";
  }
  size_t drawn = kShownSessions - budget;
  if (poll.forest.nodes.size() > drawn) {
    out += "<p class=\"meta\">" + std::to_string(poll.forest.nodes.size() - drawn) +
           " more sessions not drawn: see <a href=\"/api/locks\">/api/locks</a></p>\n";
  }
  RenderHotRows(out, poll);
  out += "</section>\n";
}

}  // namespace seatwatch::page::detail
