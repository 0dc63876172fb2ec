#include "checks/invariant_check.h"

#include <algorithm>
#include <cctype>

#include <pqxx/prepared_statement>
#include <pqxx/result>

#include "checks/detail_limits.h"
#include "checks/detail_parameters.h"
#include "checks/query_entry.h"
#include "db/savepoint.h"
#include "metrics/row_mapping.h"
#include "util/log.h"

namespace seatwatch::checks {

size_t CountParameters(const std::string& sql) {
  size_t highest = 0;
  for (size_t i = 0; i + 1 < sql.size(); ++i) {
    if (sql[i] != '$' || !std::isdigit(static_cast<unsigned char>(sql[i + 1]))) continue;
    size_t n = 0;
    size_t j = i + 1;
    while (j < sql.size() && std::isdigit(static_cast<unsigned char>(sql[j]))) {
      n = n * 10 + static_cast<size_t>(sql[j] - '0');
      ++j;
    }
    highest = std::max(highest, n);
    i = j - 1;
  }
  return highest;
}

namespace {

// The violation rows as one comparable string: labels and values in order.
std::string ViolationsKey(const std::vector<metrics::Violation>& violations) {
  std::string key;
  for (const auto& violation : violations) {
    for (const auto& label : violation.labels) key += label.name + "=" + label.value + ",";
    key += std::to_string(violation.value) + ";";
  }
  return key;
}

}  // namespace

metrics::DetailRows InvariantCheck::FetchDetail(
    CheckContext& context, const std::string& sql,
    const std::vector<metrics::Violation>& violations) const {
  metrics::DetailRows detail;
  std::vector<std::string> params =
      DetailParameters(entry().labels, violations, entry().params, CountParameters(sql));
  std::string limited = "SELECT * FROM (\n" + sql + "\n) AS seatwatch_detail LIMIT " +
                        std::to_string(kDetailRows);
  // A savepoint, so a failing detail query costs only its own rows and not
  // the verdict already reached.
  try {
    pqxx::transaction_base& tx = context.tx.Get();
    db::Savepoint savepoint(tx, "seatwatch_detail");
    db::Rows rows =
        db::ToRows(tx.exec_params(limited, pqxx::prepare::make_dynamic_params(params)));
    savepoint.Release();
    detail.columns = std::move(rows.columns);
    detail.rows = std::move(rows.values);
  } catch (const pqxx::broken_connection&) {
    throw;
  } catch (const std::exception& e) {
    detail.error = e.what();
    log::Warn("detail query failed", {{"check", entry().name}, {"error", e.what()}});
  }
  ApplyDetailLimits(detail);
  return detail;
}

std::map<std::string, std::string> InvariantCheck::invariant_help() const {
  std::map<std::string, std::string> help;
  for (const auto& name : entry().invariants) help[name] = entry().HelpOf(name);
  return help;
}

std::map<std::string, std::vector<metrics::Violation>> InvariantCheck::KeyedViolations(
    BoundRows& bound) {
  const config::QueryConfig& query = entry();
  IncrementalRows& state = *bound.keyed;
  rebuild_.Walk(
      state,
      [&](const std::string& key, const std::vector<KeyedRebuild::Row>* rows) {
        if (!rows) {
          by_key_.erase(key);
          return;
        }
        auto grouped = metrics::RowsToViolations(KeyRows(state, *rows), bound.binding,
                                                 query.invariants);
        bool any = false;
        for (const auto& [name, violations] : grouped) any = any || !violations.empty();
        if (any) {
          by_key_[key] = std::move(grouped);
        } else {
          by_key_.erase(key);
        }
      },
      [&](const auto& keys) {
        for (auto it = by_key_.begin(); it != by_key_.end();) {
          it = keys.count(it->first) ? std::next(it) : by_key_.erase(it);
        }
      });
  std::map<std::string, std::vector<metrics::Violation>> grouped;
  for (const auto& name : query.invariants) grouped[name];
  for (const auto& [key, of_key] : by_key_) {
    for (const auto& [name, violations] : of_key) {
      auto& out = grouped[name];
      out.insert(out.end(), violations.begin(), violations.end());
    }
  }
  return grouped;
}

metrics::CheckOutput InvariantCheck::Run(CheckContext& context) {
  BoundRows bound = FetchRows(context);
  const config::QueryConfig& query = entry();
  std::map<std::string, std::vector<metrics::Violation>> grouped;
  if (bound.keyed) {
    grouped = KeyedViolations(bound);
  } else {
    rebuild_.Forget();
    by_key_.clear();
    grouped = metrics::RowsToViolations(*bound.rows, bound.binding, query.invariants);
  }
  metrics::CheckOutput output;
  for (const auto& name : query.invariants) {
    metrics::InvariantResult result;
    result.name = name;
    result.check = query.name;
    result.help = query.HelpOf(name);
    result.runbook_url = query.RunbookOf(name);
    result.violations = std::move(grouped[name]);
    auto detail = query.detail_sql.find(name);
    if (result.ok() || detail == query.detail_sql.end()) {
      details_.erase(name);
    } else {
      std::string key = ViolationsKey(result.violations);
      auto now = std::chrono::steady_clock::now();
      auto cached = details_.find(name);
      if (cached == details_.end() || cached->second.violations != key ||
          now - cached->second.fetched > kDetailMaxAge || !cached->second.rows.error.empty()) {
        details_[name] =
            CachedDetail{key, FetchDetail(context, detail->second, result.violations), now};
      }
      result.detail = details_[name].rows;
    }
    output.invariants.push_back(std::move(result));
  }
  AttributeCauses(output.invariants);
  return output;
}

}  // namespace seatwatch::checks
