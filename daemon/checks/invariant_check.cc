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
std::string ViolationsKey(const std::vector<Violation>& violations) {
  std::string key;
  for (const auto& violation : violations) {
    for (const auto& label : violation.labels) key += label.name + "=" + label.value + ",";
    key += std::to_string(violation.value) + ";";
  }
  return key;
}

}  // namespace

InvariantCheck::InvariantCheck(config::QueryConfig entry, Millis interval,
                               std::optional<IncrementalSettings> incremental)
    : entry_(std::move(entry)), interval_(interval) {
  if (incremental && entry_.incremental()) {
    incremental_ = std::make_unique<IncrementalSource>(entry_, *incremental);
  }
}

void InvariantCheck::AcceptChanges(const changes::ChangeBatch& batch,
                                   changes::ResyncReason generation_reason) {
  if (incremental_) incremental_->AcceptChanges(batch, generation_reason);
}

std::optional<metrics::IncrementalStatus> InvariantCheck::incremental_status() const {
  if (!incremental_) return std::nullopt;
  return incremental_->Status();
}

void InvariantCheck::TakeStateFrom(Check& previous) {
  auto* old = dynamic_cast<InvariantCheck*>(&previous);
  if (old && incremental_ && old->incremental_) incremental_->TakeStateFrom(*old->incremental_);
}

DetailRows InvariantCheck::FetchDetail(CheckContext& context, const std::string& sql,
                                       const std::vector<Violation>& violations) const {
  DetailRows detail;
  std::vector<std::string> params =
      DetailParameters(entry_.labels, violations, entry_.params, CountParameters(sql));
  std::string limited = "SELECT * FROM (\n" + sql + "\n) AS seatwatch_detail LIMIT " +
                        std::to_string(kDetailRows);
  // A savepoint, so a failing detail query costs only its own rows and not
  // the verdict already reached.
  try {
    db::Savepoint savepoint(context.tx, "seatwatch_detail");
    db::Rows rows = db::ToRows(
        context.tx.exec_params(limited, pqxx::prepare::make_dynamic_params(params)));
    savepoint.Release();
    detail.columns = std::move(rows.columns);
    detail.rows = std::move(rows.values);
  } catch (const pqxx::broken_connection&) {
    throw;
  } catch (const std::exception& e) {
    detail.error = e.what();
    log::Warn("detail query failed", {{"check", entry_.name}, {"error", e.what()}});
  }
  ApplyDetailLimits(detail);
  return detail;
}

CheckOutput InvariantCheck::Run(CheckContext& context) {
  BoundRows bound =
      incremental_ ? incremental_->Fetch(context) : FetchEntryRows(context, entry_);
  auto grouped = metrics::RowsToViolations(*bound.rows, bound.binding, entry_.invariants);
  CheckOutput output;
  for (const auto& name : entry_.invariants) {
    InvariantResult result;
    result.name = name;
    result.check = entry_.name;
    result.help = entry_.HelpOf(name);
    result.runbook_url = entry_.RunbookOf(name);
    result.violations = std::move(grouped[name]);
    auto detail = entry_.detail_sql.find(name);
    if (result.ok() || detail == entry_.detail_sql.end()) {
      details_.erase(name);
    } else {
      std::string key = ViolationsKey(result.violations);
      auto now = std::chrono::steady_clock::now();
      auto cached = details_.find(name);
      if (cached == details_.end() || cached->second.violations != key ||
          now - cached->second.fetched > kDetailMaxAge || !cached->second.rows.error.empty()) {
        details_[name] = CachedDetail{key, FetchDetail(context, detail->second, result.violations), now};
      }
      result.detail = details_[name].rows;
    }
    output.invariants.push_back(std::move(result));
  }
  return output;
}

}  // namespace seatwatch::checks
