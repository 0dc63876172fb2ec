#include "locks/lock_poll.h"

#include <algorithm>
#include <set>

namespace seatwatch::locks {

const SessionRow* LockPoll::Session(int pid) const {
  auto it = sessions.find(pid);
  return it == sessions.end() ? nullptr : &it->second;
}

const LockWaitRow* LockPoll::Wait(int pid) const {
  auto it = waits.find(pid);
  return it == waits.end() ? nullptr : &it->second;
}

double LockPoll::WaitSeconds(int pid) const {
  const LockWaitRow* wait = Wait(pid);
  return wait ? wait->wait_seconds.value_or(0) : 0;
}

std::string LockPoll::RelationOf(int pid) const {
  const LockWaitRow* wait = Wait(pid);
  if (wait && !wait->relation_name.empty()) return wait->relation_name;
  auto node = forest.nodes.find(pid);
  if (node == forest.nodes.end() || node->second.row_target.empty()) return "";
  // The row's relation is on the tuple lock of the sessions queued behind.
  for (const auto& queue : forest.rows) {
    if (queue.target != node->second.row_target) continue;
    for (int queued : queue.queued) {
      const LockWaitRow* row_wait = Wait(queued);
      if (row_wait && !row_wait->relation_name.empty()) return row_wait->relation_name;
    }
  }
  return "";
}

std::string LockPoll::HotRowOf(int pid) const {
  auto node = forest.nodes.find(pid);
  if (node == forest.nodes.end() || node->second.row_target.empty()) return "";
  auto row = rows.find(node->second.row_target);
  return row == rows.end() ? "" : row->second;
}

std::string LockPoll::StateOf(int pid) const {
  if (pid == 0) return "prepared transaction";
  const SessionRow* session = Session(pid);
  if (!session || !session->state) return "unknown";
  return *session->state;
}

int LockPoll::RootOf(int pid) const {
  int current = pid;
  for (size_t steps = 0; steps <= forest.nodes.size(); ++steps) {
    auto node = forest.nodes.find(current);
    if (node == forest.nodes.end() || node->second.parent < 0) return current;
    current = node->second.parent;
  }
  return current;
}

double LockPoll::MaxWaitSeconds() const {
  double longest = 0;
  for (const auto& [pid, wait] : waits) longest = std::max(longest, wait.wait_seconds.value_or(0));
  return longest;
}

LockPoll AssembleLockPoll(LockPollRows rows, bool has_waitstart) {
  LockPoll poll;
  poll.wait_start_source = has_waitstart ? "waitstart" : "state_change";
  std::set<int> live;
  for (auto& session : rows.sessions) {
    live.insert(session.pid);
    int pid = session.pid;
    poll.sessions.emplace(pid, std::move(session));
  }
  for (auto& wait : rows.waits) {
    int pid = wait.pid;
    poll.waits.emplace(pid, std::move(wait));
  }
  ApplyWaitStartFallback(poll.waits, poll.sessions, has_waitstart);
  poll.forest = BuildForest(ToWaiters(poll.waits), live);
  poll.states = std::move(rows.states);
  poll.counters = rows.counters;
  return poll;
}

void ApplyWaitStartFallback(std::map<int, LockWaitRow>& waits,
                            const std::map<int, SessionRow>& sessions, bool has_waitstart) {
  for (auto& [pid, wait] : waits) {
    if (wait.wait_seconds) continue;
    auto session = sessions.find(pid);
    if (session == sessions.end()) continue;
    wait.wait_seconds = std::max(0.0, session->second.state_age_seconds.value_or(0));
    if (!has_waitstart) wait.wait_start_us = session->second.state_change_us;
  }
}

std::vector<Waiter> ToWaiters(const std::map<int, LockWaitRow>& waits) {
  std::vector<Waiter> waiters;
  for (const auto& [pid, wait] : waits) {
    waiters.push_back({pid, wait.target, wait.locktype == "tuple", wait.blockers});
  }
  return waiters;
}

std::vector<WaitSample> ToSamples(const std::map<int, LockWaitRow>& waits) {
  std::vector<WaitSample> samples;
  for (const auto& [pid, wait] : waits) {
    samples.push_back({pid, wait.wait_start_us, wait.wait_seconds.value_or(0)});
  }
  return samples;
}

}  // namespace seatwatch::locks
