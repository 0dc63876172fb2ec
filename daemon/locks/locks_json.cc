#include "locks/locks_json.h"

#include <cmath>
#include <vector>

#include "util/json_writer.h"

namespace seatwatch::locks {

namespace {

using util::JsonWriter;

double Millis(double seconds) { return std::round(seconds * 1000) / 1000; }

void WritePids(JsonWriter& json, const char* key, const std::vector<int>& pids) {
  json.Key(key).BeginArray();
  for (int pid : pids) json.Int(pid);
  json.EndArray();
}

void WriteNode(JsonWriter& json, const LockPoll& poll, int pid);

// The sessions and, nested, everyone drawn below each.
void WriteNodes(JsonWriter& json, const char* key, const LockPoll& poll,
                const std::vector<int>& pids) {
  json.Key(key).BeginArray();
  for (int pid : pids) WriteNode(json, poll, pid);
  json.EndArray();
}

void WriteSession(JsonWriter& json, const LockPoll& poll, int pid) {
  json.Key("pid").Int(pid);
  json.Key("state").String(poll.StateOf(pid));
  const SessionRow* session = poll.Session(pid);
  if (!session) return;
  if (!session->client) json.Key("backend_type").String(session->backend_type);
  json.Key("application_name").String(session->application_name);
  json.Key("usename").String(session->usename);
  json.Key("client_addr").OptionalString(session->client_addr);
  if (session->xact_age_seconds) {
    json.Key("xact_age_seconds").Number(Millis(*session->xact_age_seconds));
  }
  if (session->state_age_seconds) {
    json.Key("state_age_seconds").Number(Millis(*session->state_age_seconds));
  }
  if (session->query) json.Key("query").String(*session->query);
}

void WriteWait(JsonWriter& json, const LockPoll& poll, int pid) {
  const LockWaitRow* wait = poll.Wait(pid);
  if (!wait) return;
  const SessionRow* session = poll.Session(pid);
  json.Key("wait_seconds").Number(Millis(poll.WaitSeconds(pid)));
  json.Key("wait_event").String(session ? session->wait_event : "");
  json.Key("locktype").String(wait->locktype);
  json.Key("mode").String(wait->mode);
  std::string relation = poll.RelationOf(pid);
  if (!relation.empty()) json.Key("relation").String(relation);
}

// One session and, nested, everyone drawn below it.
void WriteNode(JsonWriter& json, const LockPoll& poll, int pid) {
  const ForestNode& node = poll.forest.nodes.at(pid);
  json.BeginObject();
  WriteSession(json, poll, pid);
  WriteWait(json, poll, pid);
  std::string hot_row = poll.HotRowOf(pid);
  if (!hot_row.empty()) json.Key("hot_row").String(hot_row);
  if (node.waiting) {
    WritePids(json, "blocked_by", node.blocked_by);
    json.Key("depth").Int(node.depth);
  }
  json.Key("blocked_directly").Int(node.blocked_directly);
  json.Key("blocked_total").Int(node.blocked_total);
  WriteNodes(json, "waiters", poll, node.children);
  json.EndObject();
}

void WriteHotRows(JsonWriter& json, const LockPoll& poll) {
  json.Key("hot_rows").BeginArray();
  for (const auto& queue : poll.forest.rows) {
    json.BeginObject();
    auto row = poll.rows.find(queue.target);
    if (row != poll.rows.end()) json.Key("row").String(row->second);
    std::string relation = queue.queued.empty() ? "" : poll.RelationOf(queue.queued.front());
    if (!relation.empty()) json.Key("relation").String(relation);
    json.Key("waiters").Int(queue.size());
    WritePids(json, "heads", queue.heads);
    WritePids(json, "queued", queue.queued);
    json.EndObject();
  }
  json.EndArray();
}

void WriteCycles(JsonWriter& json, const LockPoll& poll) {
  json.Key("cycles").BeginArray();
  for (const auto& cycle : poll.forest.cycles) {
    json.BeginObject();
    WritePids(json, "pids", cycle.pids);
    json.Key("blocked_total").Int(cycle.blocked_total);
    // Members drawn under a blocker outside the cycle appear in that tree.
    json.Key("sessions").BeginArray();
    for (int pid : cycle.pids) {
      if (poll.forest.nodes.at(pid).parent < 0) WriteNode(json, poll, pid);
    }
    json.EndArray();
    json.EndObject();
  }
  json.EndArray();
}

}  // namespace

std::string LocksJson(const LockPoll& poll) {
  JsonWriter json;
  json.BeginObject();
  json.Key("timestamp_seconds").Number(poll.timestamp_seconds);
  json.Key("wait_start_source").String(poll.wait_start_source);
  json.Key("waiting_sessions").Int(static_cast<std::int64_t>(poll.waits.size()));
  json.Key("max_wait_seconds").Number(Millis(poll.MaxWaitSeconds()));
  json.Key("chain_max_depth").Int(poll.forest.max_depth);
  json.Key("max_blocked_by_one_root").Int(poll.forest.max_blocked_by_one_root);
  json.Key("hot_row_waiters").Int(poll.forest.hot_row_waiters);
  WriteNodes(json, "roots", poll, poll.forest.roots);
  WriteHotRows(json, poll);
  WriteCycles(json, poll);
  WriteNodes(json, "unattributed", poll, poll.forest.unattributed);
  json.EndObject();
  return json.str();
}

}  // namespace seatwatch::locks
