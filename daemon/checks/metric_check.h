#pragma once

#include <memory>
#include <string>

#include "checks/keyed_rebuild.h"
#include "checks/query_entry_check.h"
#include "metrics/keyed_text_parts.h"

namespace seatwatch::checks {

// A [[metric]] entry: each row of its SQL becomes one sample of the gauge
// seatwatch_<name>. An incremental entry keyed by one of its labels renders
// its samples key by key and publishes them in parts (KeyedTextParts), so a
// recheck of a few keys rebuilds a few parts: seatwatch's CPU follows the
// writes, not the size of the family. Runs on the poller thread only.
class MetricCheck : public QueryEntryCheck {
 public:
  using QueryEntryCheck::QueryEntryCheck;

  metrics::CheckOutput Run(CheckContext& context) override;

 private:
  std::string FamilyName() const { return "seatwatch_" + entry().name; }
  std::string FamilyHelp() const;
  void RenderKeyed(BoundRows& bound, metrics::CheckOutput& output);

  KeyedRebuild rebuild_;
  metrics::KeyedTextParts parts_;
  std::shared_ptr<const std::string> header_;
};

}  // namespace seatwatch::checks
