#include "app/scoped_proof_gate.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <future>
#include <memory>
#include <thread>
#include <vector>

#include <pqxx/connection>
#include <pqxx/transaction>

#include "checks/declared_proof.h"
#include "checks/scoped_proof.h"
#include "config/validate.h"
#include "db/conninfo.h"
#include "db/local_settings.h"
#include "util/log.h"
#include "util/thread_name.h"

namespace seatwatch::app {

namespace {

// Everything the proof of one entry depends on: the same signature, the
// same verdict (on the same data).
std::string Signature(const config::Config& config, const config::QueryConfig& entry) {
  std::string out;
  auto add = [&out](const std::string& part) {
    out += std::to_string(part.size()) + ":" + part;
  };
  add(config.ChecksDsn());
  add(entry.sql);
  add(entry.scoped_sql);
  add(entry.key);
  add(entry.value);
  add(entry.invariant_column);
  add(entry.expiry_column);
  add(std::to_string(entry.max_rows));
  for (const auto& label : entry.labels) add("label " + label);
  for (const auto& param : entry.params) add("param " + param);
  return out;
}

// The proof runs on a thread of its own, which owns copies of everything it
// reads: when the budget passes, the gate gives up waiting and the thread is
// left to end with its connection (its statements are bounded by
// statement_timeout, its connect by connect_timeout, a stalled socket by
// tcp_user_timeout and the keepalives of BuildConninfo) or with the process.
struct Proofs {
  checks::DeclaredProof declared;
  checks::ScopedProof scoped;
};

std::future<Proofs> ProveInBackground(std::string conninfo, db::SessionSettings settings,
                                      config::Config config,
                                      std::vector<config::QueryConfig> entries) {
  std::promise<Proofs> promise;
  std::future<Proofs> result = promise.get_future();
  std::thread([promise = std::move(promise), conninfo = std::move(conninfo), settings,
               config = std::move(config), entries = std::move(entries)]() mutable {
    thread_name::Set("sw-proof");
    try {
      pqxx::connection connection(conninfo);
      pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> tx(connection,
                                                                    "seatwatch_scoped_proof");
      db::SetLocal(tx, {settings.statement_timeout, settings.lock_timeout});
      Proofs proofs;
      proofs.declared = checks::ProveDeclarations(tx, config);
      // A check whose declarations do not prove fails its scoped query too.
      entries.erase(std::remove_if(entries.begin(), entries.end(),
                                   [&](const config::QueryConfig& entry) {
                                     return entry.compiled &&
                                            proofs.declared.failed_checks.count(entry.pass_of);
                                   }),
                    entries.end());
      proofs.scoped = checks::ProveScopedSql(tx, entries);
      promise.set_value(std::move(proofs));
    } catch (...) {
      promise.set_exception(std::current_exception());
    }
  }).detach();
  return result;
}

}  // namespace

bool ScopedProofGate::Admit(const config::Config& config) {
  std::vector<config::QueryConfig> entries;
  for (const auto& entry : config.queries) {
    if (entry.incremental() && proved_.count(Signature(config, entry)) == 0) {
      entries.push_back(entry);
    }
  }
  if (entries.empty() && config.declared.empty() && config.declared_metrics.empty()) return true;

  db::SessionSettings settings = config::SettingsOf(config.database);
  settings.connect_timeout = std::min(settings.connect_timeout, kProofBudget);
  const std::string& dsn = config.ChecksDsn();
  // A DSN libpq cannot parse throws std::invalid_argument: a config error.
  std::string conninfo = db::BuildConninfo(dsn, settings);
  std::future<Proofs> pending = ProveInBackground(conninfo, settings, config, entries);
  if (pending.wait_for(kProofBudget) != std::future_status::ready) {
    log::Warn("scoped_sql not proved: the checks database did not answer in time",
              {{"dsn", db::MaskDsn(dsn)},
               {"waited_seconds", std::to_string(kProofBudget.count() / 1000)}});
    return true;
  }
  Proofs proofs;
  try {
    proofs = pending.get();
  } catch (const std::exception& e) {
    log::Warn("scoped_sql not proved: the checks database did not answer",
              {{"dsn", db::MaskDsn(dsn)}, {"error", db::ScrubDsnSecrets(e.what(), dsn)}});
    return true;
  }
  for (const auto& line : proofs.declared.warnings) {
    log::Warn("declared invariant costs more than it needs", {{"advice", line}});
  }
  for (const auto& line : proofs.declared.errors) {
    log::Error("declared invariant does not prove on the database", {{"error", line}});
  }
  const checks::ScopedProof& proof = proofs.scoped;
  for (const auto& line : proof.proved) log::Info("scoped_sql proved", {{"entry", line}});
  for (const auto& line : proof.notes) log::Info("scoped_sql half proved", {{"entry", line}});
  for (const auto& line : proof.warnings) log::Warn("scoped_sql not proved", {{"error", line}});
  for (const auto& line : proof.failed) log::Warn("scoped_sql does not run", {{"error", line}});
  for (const auto& line : proof.refuted) {
    log::Error("scoped_sql proved wrong", {{"error", line}});
  }
  if (!proof.refuted.empty() || !proofs.declared.errors.empty()) return false;
  for (auto index : proof.proved_entries) proved_.insert(Signature(config, entries[index]));
  return true;
}

}  // namespace seatwatch::app
