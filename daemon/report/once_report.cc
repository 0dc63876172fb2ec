#include "report/once_report.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

#include "report/terminal_text.h"
#include "util/join.h"
#include "util/utf8.h"

namespace seatwatch::report {

namespace {

std::string FormatLabels(const std::vector<metrics::Label>& labels) {
  std::vector<std::string> shown;
  for (const auto& label : labels) shown.push_back(label.name + "=" + TerminalSafe(label.value));
  return shown.empty() ? "(no labels)" : util::Join(shown, " ");
}

std::string FormatValue(double value) {
  std::ostringstream out;
  out << std::setprecision(15) << value;
  return out.str();
}

void WriteTable(std::ostringstream& out, const metrics::DetailRows& detail,
                const std::string& indent) {
  std::vector<size_t> widths;
  std::vector<std::string> columns;
  for (const auto& column : detail.columns) columns.push_back(TerminalSafe(column));
  for (const auto& column : columns) widths.push_back(column.size());
  auto cell = [](const std::optional<std::string>& value) {
    return value ? TerminalSafe(*value) : std::string("NULL");
  };
  for (const auto& row : detail.rows) {
    for (size_t i = 0; i < row.size() && i < widths.size(); ++i) {
      widths[i] = std::max(widths[i], std::min<size_t>(cell(row[i]).size(), 40));
    }
  }
  auto line = [&](const std::vector<std::string>& values) {
    out << indent;
    for (size_t i = 0; i < values.size() && i < widths.size(); ++i) {
      std::string value = values[i].size() > 40
                              ? values[i].substr(0, util::Utf8Prefix(values[i], 37)) + "..."
                              : values[i];
      out << (i ? " | " : "") << std::left << std::setw(static_cast<int>(widths[i])) << value;
    }
    out << "\n";
  };
  line(columns);
  for (const auto& row : detail.rows) {
    std::vector<std::string> values;
    for (const auto& value : row) values.push_back(cell(value));
    line(values);
  }
}

// A check's series as rendered for /metrics: each family's name and series
// count, then its samples without the HELP and TYPE comments.
void WriteSamples(std::ostringstream& out, const std::string& text) {
  std::istringstream lines(text);
  std::string line;
  std::string family;
  std::vector<std::string> samples;
  auto flush = [&] {
    if (!family.empty() && !samples.empty()) {
      out << "  " << family << " (" << samples.size() << " series)\n";
      for (const auto& sample : samples) out << "    " << sample << "\n";
    }
    samples.clear();
  };
  while (std::getline(lines, line)) {
    if (line.rfind("# HELP ", 0) == 0) {
      flush();
      family = line.substr(7, line.find(' ', 7) - 7);
    } else if (!line.empty() && line[0] != '#' && line.find("_bucket{") == std::string::npos) {
      samples.push_back(line);
    }
  }
  flush();
}

// "primary", or "standby, replay 0.4 s behind": whether the checks read a
// standby, and how late what they judged may be.
std::string DescribeServer(const db::ServerFacts& facts) {
  if (!facts.in_recovery) return "primary";
  std::ostringstream out;
  out << "standby, replay " << std::fixed << std::setprecision(1) << facts.replica_lag_seconds
      << " s behind";
  return out.str();
}

bool SameServer(const db::ServerFacts& a, const db::ServerFacts& b) {
  return a.in_recovery == b.in_recovery && a.system_identifier == b.system_identifier &&
         a.timeline == b.timeline;
}

// One line each for the DSN and the server when every lane saw the same, so
// the usual single-DSN report reads as before; else a line per lane.
void WriteLanes(std::ostringstream& out, const metrics::PollState& state,
                const std::vector<OnceLane>& lanes) {
  bool same = true;
  for (const auto& lane : lanes) {
    same = same && lane.masked_dsn == lanes.front().masked_dsn &&
           lane.reachable == lanes.front().reachable;
  }
  for (const auto& server : state.servers) {
    same = same && SameServer(server.facts, state.servers.front().facts);
  }
  auto reach = [](bool reachable) { return reachable ? "reachable" : "UNREACHABLE"; };
  if (same && !lanes.empty()) {
    out << "database: " << lanes.front().masked_dsn << " (" << reach(lanes.front().reachable)
        << ")\n";
    if (!state.servers.empty()) {
      out << "server: " << DescribeServer(state.servers.front().facts) << "\n";
    }
    return;
  }
  for (const auto& lane : lanes) {
    out << "database (" << lane.lane << " lane): " << lane.masked_dsn << " ("
        << reach(lane.reachable) << ")\n";
  }
  for (const auto& server : state.servers) {
    out << "server (" << server.lane << " lane): " << DescribeServer(server.facts) << "\n";
  }
}

}  // namespace

std::string FormatOnceReport(const metrics::PollState& state, const std::vector<OnceLane>& lanes) {
  std::ostringstream out;
  out << "seatwatch report\n";
  WriteLanes(out, state, lanes);
  out << "\n";

  out << "INVARIANTS\n";
  int shown = 0;
  for (const auto& check : state.checks) {
    for (const auto& name : check.invariants) {
      ++shown;
      const metrics::InvariantResult* result = metrics::FindInvariant(check, name);
      if (!result) {
        out << "  UNKNOWN   " << name << "  (check " << check.name << " failed: "
            << check.last_reason << ": " << TerminalSafe(check.last_error) << ")\n";
        continue;
      }
      if (result->ok()) {
        out << "  OK        " << name << "\n";
        continue;
      }
      out << "  VIOLATED  " << name << "  (" << result->violations.size() << " rows, total "
          << FormatValue(result->total()) << ")";
      if (!result->help.empty()) out << "  " << TerminalSafe(result->help);
      out << "\n";
      for (const auto& violation : result->violations) {
        out << "            " << FormatLabels(violation.labels) << "  "
            << FormatValue(violation.value) << "\n";
      }
      if (result->detail) {
        if (!result->detail->error.empty()) {
          out << "            detail query failed: " << TerminalSafe(result->detail->error)
              << "\n";
        } else {
          out << "            first offending rows"
              << (result->detail->truncated ? " (long values and rows cut)" : "") << ":\n";
          WriteTable(out, *result->detail, "              ");
        }
      }
    }
  }
  if (shown == 0) out << "  (none configured)\n";

  out << "\nMETRICS\n";
  for (const auto& check : state.checks) {
    if (!check.output || !check.rendered || !check.invariants.empty()) continue;
    WriteSamples(out, check.rendered->Text());
  }

  bool any_failed = false;
  for (const auto& check : state.checks) {
    if (check.has_run && !check.success) {
      if (!any_failed) out << "\nFAILED CHECKS\n";
      any_failed = true;
      out << "  " << check.name << ": " << check.last_reason << ": "
          << TerminalSafe(check.last_error) << "\n";
    }
  }
  for (const auto& check : state.checks) {
    if (check.output && !check.output->report.empty()) out << "\n" << check.output->report;
  }
  // Whatever else came from the database (sample lines, query texts in the
  // lock forest) is escaped here; what is escaped already is left as it is.
  return TerminalSafeLines(out.str());
}

int OnceExitCode(const metrics::PollState& state) {
  if (!state.database_up) return 3;
  for (const auto& check : state.checks) {
    if (!check.success) return 1;
    for (const auto& invariant : check.output->invariants) {
      if (!invariant.ok()) return 1;
    }
  }
  return 0;
}

}  // namespace seatwatch::report
