#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <prometheus/metric_family.h>

#include "locks/lock_poll.h"

namespace seatwatch::checks {

using Label = prometheus::ClientMetric::Label;

// One offending row of an invariant: its label columns and its count.
struct Violation {
  std::vector<Label> labels;
  double value = 0;
};

// The first offending rows from an invariant's detail_sql, as text.
struct DetailRows {
  std::vector<std::string> columns;
  std::vector<std::vector<std::optional<std::string>>> rows;
  std::string error;  // set when the detail query itself failed
  bool truncated = false;  // values cut or rows dropped by the detail limits
};

struct InvariantResult {
  std::string name;
  std::string check;
  std::string help;         // the invariant's own help, else its entry's
  std::string runbook_url;  // its runbook entry; empty: none configured
  std::vector<Violation> violations;
  std::optional<DetailRows> detail;  // only when violated and a detail_sql exists

  bool ok() const {
    for (const auto& v : violations) {
      if (v.value != 0) return false;
    }
    return true;
  }
  double total() const {
    double sum = 0;
    for (const auto& v : violations) sum += v.value;
    return sum;
  }
};

// The one row of the [holds] query, judged by the database's clock.
struct HoldsCounts {
  double active = 0;                  // held, hold_expires_at > now()
  double expired = 0;                 // still held, hold_expires_at <= now(): the backlog
  double expired_oldest_seconds = 0;  // now() - the oldest expiry among those (0: none)
  double payments_lapsed = 0;         // 'started' payments whose fan no longer holds the seat
};

// What one successful run of a check produced. Immutable once published.
struct CheckOutput {
  std::vector<prometheus::MetricFamily> families;
  // Series the check wrote in text format itself, after `families`.
  std::string text;
  std::vector<InvariantResult> invariants;
  // Named JSON documents served under /api/<name> (e.g. "locks").
  std::map<std::string, std::string> documents;
  // Extra human-readable text for the --once report.
  std::string report;
  // The facts themselves, for the status page (which renders them per page
  // view, never asking the database): the locks check's poll and the holds
  // check's counts; null/empty from other checks.
  std::shared_ptr<const locks::LockPoll> lock_poll;
  std::optional<HoldsCounts> holds;
};

}  // namespace seatwatch::checks
