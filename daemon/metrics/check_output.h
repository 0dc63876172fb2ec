#pragma once

#include <any>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <prometheus/metric_family.h>

#include "metrics/provenance.h"

namespace seatwatch::metrics {

using Label = prometheus::ClientMetric::Label;

// One offending row of an invariant: its label columns and its count.
struct Violation {
  Violation() = default;
  Violation(std::vector<Label> labels_in, double value_in,
            std::shared_ptr<const Provenance> cause_in = nullptr)
      : labels(std::move(labels_in)), value(value_in), cause(std::move(cause_in)) {}

  std::vector<Label> labels;
  double value = 0;
  // Incremental mode: the commits that changed this key since a run last
  // found it clean (see ProvenanceLedger); null when none are known.
  std::shared_ptr<const Provenance> cause;
};

// The first offending rows from an invariant's detail_sql, as text.
struct DetailRows {
  std::vector<std::string> columns;
  std::vector<std::vector<std::optional<std::string>>> rows;
  std::string error;       // set when the detail query itself failed
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

// What one successful run of a check produced, as the snapshot keeps it.
// Immutable once published.
struct CheckOutput {
  std::vector<prometheus::MetricFamily> families;
  // Series the check wrote in text format itself, after `families`.
  std::string text;
  // Series in text format kept by the check across runs, after `text`: a
  // part a run did not change is the same object as the last run's.
  std::vector<std::shared_ptr<const std::string>> parts;
  std::vector<InvariantResult> invariants;
  // Named JSON documents served under /api/<name> (e.g. "locks").
  std::map<std::string, std::string> documents;
  // Extra human-readable text for the --once report.
  std::string report;
  // The check's own facts, for the status page (which renders them per page
  // view, never asking the database); the check that sets them names their
  // type (the locks check a shared_ptr<const locks::LockPoll>, the holds
  // check its checks::HoldsCounts). Empty from other checks.
  std::any facts;
};

}  // namespace seatwatch::metrics
