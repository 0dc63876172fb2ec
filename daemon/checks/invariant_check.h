#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "checks/keyed_rebuild.h"
#include "checks/query_entry_check.h"
#include "config/config.h"

namespace seatwatch::checks {

// An [[invariant]] entry: one query judging one invariant, or, with
// invariant_column, one pass that judges several. When an invariant is
// violated its detail_sql (if any) fetches the first offending rows in the
// same snapshot, given the offending keys (see DetailParameters). A detail
// query may still cost a few index lookups per key, so it runs again only
// when the violations change, or after kDetailMaxAge. Runs on the poller
// thread only; keeps the last details between runs. An incremental entry
// keyed by one of its labels maps only the rows of the keys a recheck
// changed, keeping each key's violations between runs.
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

  // BoundRows::keyed: every invariant's violations, in key order, from the
  // violations kept per key, after those of the changed keys are mapped.
  std::map<std::string, std::vector<metrics::Violation>> KeyedViolations(BoundRows& bound);
  KeyedRebuild rebuild_;
  // key -> invariant -> its violation rows; only keys that have some.
  std::map<std::string, std::map<std::string, std::vector<metrics::Violation>>> by_key_;
};

// How many leading parameters a query uses: the highest $N in its text.
size_t CountParameters(const std::string& sql);

}  // namespace seatwatch::checks
