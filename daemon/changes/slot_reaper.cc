#include "changes/slot_reaper.h"

#include <set>
#include <thread>

#include <pqxx/except>
#include <pqxx/nontransaction>
#include <pqxx/result>

namespace seatwatch::changes {

namespace {

using Clock = std::chrono::steady_clock;

std::string NamesLiteral(const std::vector<GivenUpSlot>& slots) {
  // Slot names are [a-z0-9_]: nothing to quote.
  std::string out = "{";
  for (const auto& slot : slots) out += (out.size() > 1 ? "," : "") + slot.slot_name;
  return out + "}";
}

// Of `slots`, those whose slot exists or whose backend is in `pids` and
// still runs.
std::vector<GivenUpSlot> Lingering(pqxx::connection& connection,
                                   const std::vector<GivenUpSlot>& slots,
                                   const std::set<int>& pids) {
  pqxx::nontransaction tx(connection, "changes_reap");
  std::set<std::string> slot_names;
  for (const auto& row : tx.exec_params(
           "SELECT slot_name::text FROM pg_replication_slots WHERE slot_name = ANY ($1::name[])",
           NamesLiteral(slots))) {
    slot_names.insert(row[0].c_str());
  }
  std::set<int> running;
  for (int pid : pids) {
    if (tx.exec_params1("SELECT count(*) FROM pg_stat_activity WHERE pid = $1", pid)[0]
            .as<int>() > 0) {
      running.insert(pid);
    }
  }
  std::vector<GivenUpSlot> out;
  for (const auto& slot : slots) {
    if (slot_names.count(slot.slot_name) || running.count(slot.backend_pid)) out.push_back(slot);
  }
  return out;
}

}  // namespace

ReapResult ReapSlots(pqxx::connection& connection, const std::vector<GivenUpSlot>& given_up,
                     const std::string& prefix, std::chrono::milliseconds wait) {
  ReapResult result;
  std::set<int> ended_pids;
  for (const auto& slot : given_up) {
    try {
      pqxx::nontransaction tx(connection, "changes_reap");
      // Only while that backend still holds that slot: a pid alone may have
      // been reused by another session.
      pqxx::result ended = tx.exec_params(
          "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots "
          "WHERE slot_name = $1 AND active_pid = $2",
          slot.slot_name, slot.backend_pid);
      if (!ended.empty() && ended[0][0].as<bool>()) {
        result.ended.push_back(slot);
        ended_pids.insert(slot.backend_pid);
      }
    } catch (const pqxx::sql_error&) {
      // Left in `remaining` below if its slot is still there.
    }
  }
  std::vector<std::string> inactive;
  {
    pqxx::nontransaction tx(connection, "changes_reap");
    for (const auto& row : tx.exec_params(
             "SELECT slot_name::text FROM pg_replication_slots "
             "WHERE active_pid IS NULL AND database = current_database() "
             "AND slot_name ~ ('^' || $1 || '_[0-9]+_[0-9]+$')",
             prefix)) {
      inactive.push_back(row[0].c_str());
    }
  }
  for (const auto& name : inactive) {
    try {
      pqxx::nontransaction tx(connection, "changes_reap");
      tx.exec_params("SELECT pg_drop_replication_slot($1)", name);
      result.dropped.push_back(name);
    } catch (const pqxx::sql_error&) {
      ++result.inactive_left;  // taken meanwhile, or not ours to drop
    }
  }
  if (given_up.empty()) return result;
  // A terminated backend takes a moment to exit, and its temporary slot goes
  // on the way out.
  auto deadline = Clock::now() + wait;
  std::vector<GivenUpSlot> lingering = Lingering(connection, given_up, ended_pids);
  while (!lingering.empty() && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    lingering = Lingering(connection, given_up, ended_pids);
  }
  result.remaining = StillThere(connection, lingering);
  return result;
}

std::vector<GivenUpSlot> StillThere(pqxx::connection& connection,
                                    const std::vector<GivenUpSlot>& given_up) {
  if (given_up.empty()) return {};
  return Lingering(connection, given_up, {});
}

}  // namespace seatwatch::changes
