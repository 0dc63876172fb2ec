#include "poll/violation_log.h"

#include "metrics/provenance.h"
#include "util/log.h"

namespace seatwatch::poll {

void LogOpenedViolation(const metrics::OpenViolation& opened, bool incremental) {
  std::string key;
  for (const auto& label : opened.labels) {
    key += (key.empty() ? "" : ",") + label.name + "=" + label.value;
  }
  std::string cause = opened.first_violated_by && !opened.first_violated_by->commits.empty()
                          ? metrics::DescribeProvenance(*opened.first_violated_by)
                          : metrics::NoProvenanceReason(incremental);
  log::Warn("invariant violated", {{"check", opened.check},
                                   {"invariant", opened.invariant},
                                   {"key", key},
                                   {"since", metrics::UtcText(opened.since_unix)},
                                   {"first_violated_by", cause}});
}

void LogMoreOpened(std::uint64_t more) {
  log::Warn("invariant violated: more keys than logged one by one",
            {{"keys", std::to_string(more)}});
}

}  // namespace seatwatch::poll
