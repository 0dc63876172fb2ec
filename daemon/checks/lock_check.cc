#include "checks/lock_check.h"

#include <any>
#include <iomanip>
#include <sstream>

#include "locks/lock_metrics.h"
#include "locks/lock_wait_reader.h"
#include "locks/locks_json.h"
#include "locks/locks_report.h"
#include "util/log.h"

namespace seatwatch::checks {

namespace {

// Each resolution is one ctid lookup; the hottest rows are the ones on-call
// needs named.
constexpr size_t kMaxNamedRows = 10;

std::string Seconds(double seconds) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(1) << seconds;
  return out.str();
}

// A relation-level lock request on the table (DDL waiting or queued): a ctid
// lookup would queue behind it until lock_timeout. Leave the row unnamed.
bool RelationLockQueued(const locks::LockPoll& poll, std::uint32_t relation) {
  for (const auto& [pid, wait] : poll.waits) {
    if (wait.locktype == "relation" && wait.relation == relation) return true;
  }
  return false;
}

locks::QueryTextMode QueryTextOf(config::LocksConfig::ShowQuery show) {
  switch (show) {
    case config::LocksConfig::ShowQuery::kNone:
      return locks::QueryTextMode::kNone;
    case config::LocksConfig::ShowQuery::kRaw:
      return locks::QueryTextMode::kRaw;
    case config::LocksConfig::ShowQuery::kNormalized:
      break;
  }
  return locks::QueryTextMode::kNormalized;
}

}  // namespace

std::shared_ptr<const locks::LockPoll> LockPollOf(const metrics::CheckOutput& output) {
  const auto* poll = std::any_cast<std::shared_ptr<const locks::LockPoll>>(&output.facts);
  return poll ? *poll : nullptr;
}

LockCheck::LockCheck(config::LocksConfig config)
    : config_(std::move(config)),
      hot_rows_(config_.resolve_rows),
      episodes_(std::chrono::duration<double>(config_.log_threshold).count(),
                locks::LockWaitBuckets()) {}

void LockCheck::TakeStateFrom(Check& previous) {
  auto* old = dynamic_cast<LockCheck*>(&previous);
  if (!old) return;
  episodes_ = std::move(old->episodes_);
  episodes_.set_log_threshold(std::chrono::duration<double>(config_.log_threshold).count());
}

locks::LockPoll LockCheck::Read(CheckContext& context) {
  pqxx::transaction_base& tx = context.tx.Get();
  bool has_waitstart = tx.conn().server_version() >= 140000;
  // One statement: sessions, lock waits (only when someone waits), query
  // texts of the forest and the database counters.
  locks::LockPoll poll = locks::AssembleLockPoll(
      locks::ReadLockPoll(tx, has_waitstart, QueryTextOf(config_.show_query),
                          config_.query_max_length),
      has_waitstart);
  poll.timestamp_seconds =
      std::chrono::duration<double>(context.now.time_since_epoch()).count();
  NameHotRows(tx, poll);
  return poll;
}

void LockCheck::NameHotRows(pqxx::transaction_base& tx, locks::LockPoll& poll) {
  hot_rows_.Refresh(tx, std::chrono::steady_clock::now());
  for (const auto& [oid, table] : hot_rows_.tables()) poll.watched_relations.push_back(table.name);
  size_t looked_up = 0;
  std::map<std::string, std::string> previous = std::move(named_rows_);
  for (const auto& queue : poll.forest.rows) {
    // A row queued for at the last poll and still now is the same row: its
    // tuple cannot be vacuumed away while a locker waits on it. Reuse its
    // name instead of looking it up again every poll of a long queue.
    auto known = previous.find(queue.target);
    if (known != previous.end()) {
      poll.rows[queue.target] = known->second;
      named_rows_.insert(*known);
      continue;
    }
    // The row is on the tuple lock of any session queued behind the head.
    for (int pid : queue.queued) {
      const locks::LockWaitRow* wait = poll.Wait(pid);
      if (!wait || !wait->relation || !wait->page || !wait->tuple) continue;
      std::optional<std::string> shown;
      bool configured = hot_rows_.tables().count(*wait->relation) > 0;
      if (configured && looked_up < kMaxNamedRows && !RelationLockQueued(poll, *wait->relation)) {
        ++looked_up;
        shown = hot_rows_.Resolve(tx, *wait->relation, *wait->page, *wait->tuple);
      }
      poll.rows[queue.target] =
          shown.value_or(locks::FormatRowCtid(wait->relation_name, *wait->page, *wait->tuple));
      // Only names found by key are kept: a row left unnamed (over the
      // per-poll limit, or its lookup failed) is tried again next poll.
      if (shown) named_rows_[queue.target] = *shown;
      break;
    }
  }
}

void LockCheck::LogLongWaits(const locks::LockPoll& poll, const std::vector<int>& pids) const {
  for (int pid : pids) {
    int root = poll.RootOf(pid);
    const locks::SessionRow* session = poll.Session(root);
    const locks::SessionRow* waiter = poll.Session(pid);
    auto node = poll.forest.nodes.find(root);
    int behind = node == poll.forest.nodes.end() ? 0 : node->second.blocked_total;
    std::string xact_age;
    if (session && session->xact_age_seconds) xact_age = Seconds(*session->xact_age_seconds);
    log::Warn("lock wait past threshold",
              {{"check", "locks"},
               {"pid", std::to_string(pid)},
               {"wait_seconds", Seconds(poll.WaitSeconds(pid))},
               {"relation", poll.RelationOf(pid)},
               {"hot_row", poll.HotRowOf(pid)},
               {"root_pid", root == pid ? "" : std::to_string(root)},
               {"root_state", root == pid ? "" : poll.StateOf(root)},
               {"root_application", session && root != pid ? session->application_name : ""},
               {"root_xact_age_seconds", root == pid ? "" : xact_age},
               {"waiting_behind_root", std::to_string(behind)},
               // As /api/locks shows them: normalized unless show_query = "raw".
               {"query", waiter ? waiter->query.value_or("") : ""},
               {"root_query", session && root != pid ? session->query.value_or("") : ""}});
  }
}

metrics::CheckOutput LockCheck::Run(CheckContext& context) {
  locks::LockPoll poll = Read(context);
  locks::EpisodeChanges changes = episodes_.Update(locks::ToSamples(poll.waits));
  LogLongWaits(poll, changes.crossed_threshold);
  metrics::CheckOutput output;
  output.families = locks::BuildLockFamilies(poll, episodes_);
  output.documents["locks"] = locks::LocksJson(poll);
  output.report = locks::LocksReport(poll);
  output.facts = std::make_shared<const locks::LockPoll>(poll);
  last_ = std::move(poll);
  return output;
}

}  // namespace seatwatch::checks
