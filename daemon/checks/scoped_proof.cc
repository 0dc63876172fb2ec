#include "checks/scoped_proof.h"

#include <map>
#include <optional>
#include <utility>

#include <pqxx/except>
#include <pqxx/prepared_statement>
#include <pqxx/result>

#include "checks/query_entry.h"
#include "checks/scoped_comparison.h"
#include "db/array_literal.h"
#include "db/failure.h"
#include "db/rows.h"
#include "db/savepoint.h"

namespace seatwatch::checks {

namespace {

constexpr const char* kSavepoint = "seatwatch_scoped_proof";

// One full pass, shared by the entries with its sql and params.
struct FullPass {
  std::optional<db::Rows> rows;  // none: it failed
  std::string failure;           // why, when it failed
};

// The entry's statement under a savepoint: its rows, or the exception.
db::Rows Run(pqxx::transaction_base& tx, const std::string& sql,
             const std::vector<std::string>& params) {
  db::Savepoint savepoint(tx, kSavepoint);
  db::Rows rows = db::ToRows(tx.exec_params(sql, pqxx::prepare::make_dynamic_params(params)));
  savepoint.Release();
  return rows;
}

// Whether a failure is the server giving up on time (statement_timeout,
// lock_timeout, a standby's replay): says nothing of the query.
bool OutOfTime(const std::exception& e) {
  auto reason = db::ClassifyException(e);
  return reason == db::FailureReason::kTimeout || reason == db::FailureReason::kLockTimeout ||
         reason == db::FailureReason::kRecoveryConflict;
}

class Prover {
 public:
  Prover(pqxx::transaction_base& tx, ScopedProof& out) : tx_(tx), out_(out) {}

  // Whether the entry was proved.
  bool Prove(const config::QueryConfig& entry) {
    where_ = entry.KeyLocation("scoped_sql").Describe(std::string(EntrySection(entry)) +
                                                      ".scoped_sql");
    // (a) No keys, no rows.
    auto none = Scoped(entry, {});
    if (!none) return false;
    if (auto problem = RowsForNoKeys(entry, *none)) {
      out_.refuted.push_back(where_ + ": " + *problem);
      return false;
    }
    // (b) Some keys of the full pass, exactly its rows.
    const FullPass& full = Full(entry);
    if (!full.rows) {
      Warn("the rows of keys not compared: " + full.failure);
      return false;
    }
    for (const auto& column : ComparedColumns(entry)) {
      if (full.rows->ColumnIndex(column) < 0) {
        Warn("the rows of keys not compared: sql returns no column " + column);
        return false;
      }
    }
    std::vector<std::string> keys = SampleKeys(*full.rows, entry.key, kProofKeys);
    if (keys.empty()) {
      out_.notes.push_back(std::string(EntrySection(entry)) + " " + entry.name +
                           ": scoped_sql returns no rows for no keys; sql returns no " +
                           entry.key + " to compare its rows with");
      return false;
    }
    auto some = Scoped(entry, keys);
    if (!some) return false;
    if (auto problem = ScopedRowsDiffer(entry, *full.rows, *some, keys)) {
      out_.refuted.push_back(where_ + ": " + *problem);
      return false;
    }
    std::string list;
    for (const auto& key : keys) list += (list.empty() ? "" : ", ") + key;
    out_.proved.push_back(std::string(EntrySection(entry)) + " " + entry.name +
                          ": scoped_sql returns no rows for no keys and sql's rows for " +
                          entry.key + " " + list);
    return true;
  }

 private:
  void Warn(const std::string& what) { out_.warnings.push_back(where_ + ": " + what); }

  // scoped_sql with $1 = `keys`, then params; nullopt after a finding.
  std::optional<db::Rows> Scoped(const config::QueryConfig& entry,
                                 const std::vector<std::string>& keys) {
    std::vector<std::string> params;
    params.reserve(entry.params.size() + 1);
    params.push_back(db::TextArrayLiteral(keys));
    params.insert(params.end(), entry.params.begin(), entry.params.end());
    try {
      db::Rows rows = Run(tx_, RowLimited(entry.scoped_sql, entry), params);
      CheckRowLimit(rows, entry);
      return rows;
    } catch (const pqxx::broken_connection&) {
      throw;
    } catch (const std::exception& e) {
      std::string with = keys.empty() ? "with no keys" : "with keys of sql";
      if (OutOfTime(e)) {
        Warn("not proved: " + with + ": " + e.what());
      } else {
        out_.failed.push_back(where_ + ": " + entry.scoped_sql_path + ": " + with + ": " +
                              e.what());
      }
      return std::nullopt;
    }
  }

  const FullPass& Full(const config::QueryConfig& entry) {
    std::string id = entry.sql + '\0' + std::to_string(entry.max_rows);
    for (const auto& param : entry.params) id += '\0' + param;
    auto it = full_.find(id);
    if (it != full_.end()) return it->second;
    FullPass pass;
    try {
      db::Rows rows = Run(tx_, RowLimitedSql(entry), entry.params);
      CheckRowLimit(rows, entry);
      pass.rows = std::move(rows);
    } catch (const pqxx::broken_connection&) {
      throw;
    } catch (const std::exception& e) {
      pass.failure = std::string(OutOfTime(e) ? "the full pass ran out of time: "
                                              : "the full pass failed: ") +
                     e.what();
    }
    return full_.emplace(std::move(id), std::move(pass)).first->second;
  }

  pqxx::transaction_base& tx_;
  ScopedProof& out_;
  std::string where_;
  std::map<std::string, FullPass> full_;
};

}  // namespace

ScopedProof ProveScopedSql(pqxx::transaction_base& tx,
                           const std::vector<config::QueryConfig>& entries) {
  ScopedProof proof;
  Prover prover(tx, proof);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].incremental() && prover.Prove(entries[i])) proof.proved_entries.push_back(i);
  }
  return proof;
}

}  // namespace seatwatch::checks
