#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "checks/query_entry_check.h"
#include "config/config.h"

namespace seatwatch::checks {

// An [[invariant]] entry: one query judging one invariant, or, with
// invariant_column, one pass that judges several. When an invariant is
// violated its detail_sql (if any) fetches the first offending rows in the
// same snapshot, given the offending keys (see DetailParameters). A detail
// query may still cost a few index lookups per key, so it runs again only
// when the violations change, or after kDetailMaxAge. Runs on the poller
// thread only; keeps the last details between runs.
class InvariantCheck : public QueryEntryCheck {
 public:
  static constexpr int kDetailRows = 20;
  static constexpr std::chrono::minutes kDetailMaxAge{5};

  using QueryEntryCheck::QueryEntryCheck;

  std::vector<std::string> invariants() const override { return entry().invariants; }
  std::map<std::string, std::string> invariant_help() const override;
  metrics::CheckOutput Run(CheckContext& context) override;

 private:
  metrics::DetailRows FetchDetail(CheckContext& context, const std::string& sql,
                                  const std::vector<metrics::Violation>& violations) const;

  struct CachedDetail {
    std::string violations;  // what the detail was fetched for
    metrics::DetailRows rows;
    std::chrono::steady_clock::time_point fetched;
  };

  std::map<std::string, CachedDetail> details_;  // by invariant
};

// How many leading parameters a query uses: the highest $N in its text.
size_t CountParameters(const std::string& sql);

}  // namespace seatwatch::checks
