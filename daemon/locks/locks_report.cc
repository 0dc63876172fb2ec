#include "locks/locks_report.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

#include "locks/query_text.h"

namespace seatwatch::locks {

std::string SessionWho(const SessionRow& session) {
  std::string who = "(" + (session.application_name.empty() ? "-" : session.application_name) +
                    " " + session.usename + "@" + session.client_addr.value_or("local");
  if (!session.client) who += ", " + session.backend_type;
  return who + ")";
}

namespace {

constexpr size_t kQueryShown = 100;

std::string Seconds(double seconds) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(1) << seconds << "s";
  return out.str();
}

std::string OneLine(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  // Cut whole characters: the text is already normalized (or raw by choice).
  if (TruncateUtf8(text, kQueryShown).size() == text.size()) return text;
  return TruncateUtf8(std::move(text), kQueryShown - 3) + "...";
}

void WriteNode(std::ostringstream& out, const LockPoll& poll, int pid, const std::string& indent) {
  const ForestNode& node = poll.forest.nodes.at(pid);
  const SessionRow* session = poll.Session(pid);
  const LockWaitRow* wait = poll.Wait(pid);
  const auto& roots = poll.forest.roots;
  bool root = std::find(roots.begin(), roots.end(), pid) != roots.end();
  out << indent << (root ? "root pid " : "pid ") << pid;
  if (wait) {
    out << " waits " << Seconds(poll.WaitSeconds(pid)) << " " << wait->locktype << " "
        << wait->mode;
    std::string relation = poll.RelationOf(pid);
    if (!relation.empty()) out << " on " << relation;
    std::string row = poll.HotRowOf(pid);
    if (!row.empty()) out << " " << row;
  } else {
    // A blocker: its state and for how long tell whether it is working.
    out << " " << poll.StateOf(pid);
    if (session && session->state_age_seconds) out << " " << Seconds(*session->state_age_seconds);
  }
  if (session) {
    out << " " << SessionWho(*session);
    if (!wait && session->xact_age_seconds) out << " xact " << Seconds(*session->xact_age_seconds);
  }
  out << "\n";
  if (root) {
    out << indent << "  holds up " << node.blocked_total << " (" << node.blocked_directly
        << " directly)\n";
  }
  if (session && session->query && !session->query->empty()) {
    out << indent << "  query: " << OneLine(*session->query) << "\n";
  }
  for (int child : node.children) WriteNode(out, poll, child, indent + "  ");
}

}  // namespace

std::string LocksReport(const LockPoll& poll) {
  std::ostringstream out;
  out << "LOCKS\n";
  if (poll.waits.empty()) {
    out << "  no session waits on a lock\n";
    return out.str();
  }
  out << "  " << poll.waits.size() << " waiting, longest " << Seconds(poll.MaxWaitSeconds())
      << ", deepest chain " << poll.forest.max_depth << ", most behind one root "
      << poll.forest.max_blocked_by_one_root << "\n";
  for (int pid : poll.forest.roots) WriteNode(out, poll, pid, "  ");
  for (const auto& cycle : poll.forest.cycles) {
    out << "  cycle (a deadlock not yet detected):";
    for (int pid : cycle.pids) out << " " << pid;
    out << "\n";
    for (int pid : cycle.pids) {
      if (poll.forest.nodes.at(pid).parent < 0) WriteNode(out, poll, pid, "    ");
    }
  }
  for (int pid : poll.forest.unattributed) {
    out << "  blocker ended meanwhile:\n";
    WriteNode(out, poll, pid, "    ");
  }
  return out.str();
}

}  // namespace seatwatch::locks
