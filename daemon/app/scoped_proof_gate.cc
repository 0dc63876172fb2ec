#include "app/scoped_proof_gate.h"

#include <memory>
#include <vector>

#include <pqxx/connection>
#include <pqxx/transaction>

#include "checks/scoped_proof.h"
#include "config/validate.h"
#include "db/conninfo.h"
#include "db/local_settings.h"
#include "util/log.h"

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

}  // namespace

bool ScopedProofGate::Admit(const config::Config& config) {
  std::vector<config::QueryConfig> entries;
  for (const auto& entry : config.queries) {
    if (entry.incremental() && proved_.count(Signature(config, entry)) == 0) {
      entries.push_back(entry);
    }
  }
  if (entries.empty()) return true;

  db::SessionSettings settings = config::SettingsOf(config.database);
  const std::string& dsn = config.ChecksDsn();
  // A DSN libpq cannot parse throws std::invalid_argument: a config error.
  std::string conninfo = db::BuildConninfo(dsn, settings);
  checks::ScopedProof proof;
  try {
    pqxx::connection connection(conninfo);
    pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> tx(connection,
                                                                  "seatwatch_scoped_proof");
    db::SetLocal(tx, {settings.statement_timeout, settings.lock_timeout});
    proof = checks::ProveScopedSql(tx, entries);
  } catch (const std::exception& e) {
    log::Warn("scoped_sql not proved: the checks database did not answer",
              {{"dsn", db::MaskDsn(dsn)}, {"error", db::ScrubDsnSecrets(e.what(), dsn)}});
    return true;
  }
  for (const auto& line : proof.proved) log::Info("scoped_sql proved", {{"entry", line}});
  for (const auto& line : proof.notes) log::Info("scoped_sql half proved", {{"entry", line}});
  for (const auto& line : proof.warnings) log::Warn("scoped_sql not proved", {{"error", line}});
  for (const auto& line : proof.failed) log::Warn("scoped_sql does not run", {{"error", line}});
  for (const auto& line : proof.refuted) {
    log::Error("scoped_sql proved wrong", {{"error", line}});
  }
  if (!proof.refuted.empty()) return false;
  for (auto index : proof.proved_entries) proved_.insert(Signature(config, entries[index]));
  return true;
}

}  // namespace seatwatch::app
