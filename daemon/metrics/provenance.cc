#include "metrics/provenance.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "util/utf8.h"

namespace seatwatch::metrics {

ValueText ValueText::Of(Kind kind, std::string_view text) {
  ValueText value;
  value.kind = kind;
  if (kind != Kind::kText) return value;
  // Cut on a character boundary: a value is shown on a page and in JSON.
  std::size_t end = 0;
  while (end < text.size()) {
    std::size_t length = util::Utf8SequenceLength(text, end);
    if (length == 0) length = 1;  // ValidUtf8 replaces it below
    if (end + length > kMaxValueBytes) break;
    end += length;
  }
  value.cut = end < text.size();
  value.text = util::ValidUtf8(text.substr(0, end));
  return value;
}

std::string ValueText::Display() const {
  switch (kind) {
    case Kind::kAbsent: return "?";
    case Kind::kNull: return "NULL";
    case Kind::kUnchanged: return "(unchanged)";
    case Kind::kBinary: return "(binary)";
    case Kind::kText: return cut ? text + "…" : text;
  }
  return "?";
}

std::string LsnText(std::uint64_t lsn) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%X/%X", static_cast<unsigned>(lsn >> 32),
                static_cast<unsigned>(lsn & 0xffffffffu));
  return buffer;
}

std::string UtcText(double unix_seconds) {
  double whole = std::floor(unix_seconds);
  auto seconds = static_cast<std::time_t>(whole);
  int millis = static_cast<int>(std::lround((unix_seconds - whole) * 1000));
  if (millis >= 1000) {
    seconds += 1;
    millis -= 1000;
  }
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buffer[96];
  std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, millis);
  return buffer;
}

std::string NoProvenanceReason(bool incremental) {
  if (!incremental) return "none: provenance is kept in incremental mode only";
  return "unknown: the change feed handed over no commit of this key since it was last "
         "clean (found by a full pass: at startup, after a resync, or by a backstop)";
}

std::string DescribeChange(const RowChange& change) {
  std::string out = change.operation + " " + change.table + "(" + change.key_column + "=" +
                    change.key;
  for (const auto& column : change.identity) {
    // The identity as the row had it: its old value where it moved.
    const ValueText& value =
        column.before.kind != ValueText::Kind::kAbsent ? column.before : column.after;
    out += ", " + column.column + "=" + value.Display();
  }
  out += ")";
  for (const auto& column : change.columns) {
    out += " " + column.column + " ";
    if (change.operation == "INSERT") {
      out += column.after.Display();
    } else if (change.operation == "DELETE") {
      out += column.before.Display();
    } else {
      out += column.before.Display() + "→" + column.after.Display();
    }
  }
  return out;
}

NewestCommits Newest(const Provenance& provenance, std::size_t at_most) {
  std::size_t shown = std::min(provenance.commits.size(), at_most);
  NewestCommits newest;
  newest.first = provenance.commits.size() - shown;
  newest.earlier = provenance.earlier_omitted + newest.first;
  return newest;
}

std::string DescribeProvenance(const Provenance& provenance) {
  std::string out;
  NewestCommits shown = Newest(provenance, kLoggedCommits);
  if (shown.earlier > 0) out += std::to_string(shown.earlier) + " earlier commits not shown; ";
  for (std::size_t i = shown.first; i < provenance.commits.size(); ++i) {
    const CommitProvenance& commit = provenance.commits[i];
    if (i > shown.first) out += "; ";
    out += "xid=" + std::to_string(commit.xid) + " committed_at=" + UtcText(commit.commit_unix) +
           " lsn=" + LsnText(commit.commit_lsn) + " application=";
    if (commit.session) {
      out += "\"" + commit.session->application_name + "\" user=" + commit.session->user +
             " client=" + commit.session->client_addr;
    } else {
      out += "(not seen)";
    }
    out += " changes=\"";
    for (std::size_t c = 0; c < commit.changes.size(); ++c) {
      if (c > 0) out += "; ";
      out += DescribeChange(commit.changes[c]);
    }
    if (commit.truncated) out += commit.changes.empty() ? "(not kept)" : "; …";
    out += "\"";
  }
  return out;
}

}  // namespace seatwatch::metrics
