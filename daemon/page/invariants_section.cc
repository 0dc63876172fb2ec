#include <algorithm>

#include "page/page_format.h"
#include "page/page_sections.h"

namespace seatwatch::page::detail {

namespace {

// The label names of the shown keys, in order of first appearance (the rows
// of one invariant normally share them).
std::vector<std::string> KeyColumns(const std::vector<metrics::Violation>& keys) {
  std::vector<std::string> names;
  for (const auto& violation : keys) {
    for (const auto& label : violation.labels) {
      if (std::find(names.begin(), names.end(), label.name) == names.end()) {
        names.push_back(label.name);
      }
    }
  }
  return names;
}

// The labels of a key as "name=value, ...".
std::string KeyText(const metrics::Labels& labels) {
  std::string text;
  for (const auto& label : labels) {
    text += (text.empty() ? "" : ", ") + label.name + "=" + label.value;
  }
  return text;
}

// Under a key: the commits the change feed saw change it before it turned
// violated, newest last (at most kShownCommits; all in /api/invariants).
void RenderCause(std::string& out, const metrics::Provenance& cause, size_t width) {
  constexpr size_t kShownCommits = 3;
  out += "<tr class=\"cause\"><td colspan=\"" + std::to_string(width) +
         "\"><span class=\"meta\">first violated by</span><ul class=\"commits\">";
  metrics::NewestCommits shown = metrics::Newest(cause, kShownCommits);
  if (shown.earlier > 0) {
    out += "<li class=\"meta\">" + std::to_string(shown.earlier) +
           " earlier commits (see /api/invariants)</li>";
  }
  for (size_t c = shown.first; c < cause.commits.size(); ++c) {
    const auto& commit = cause.commits[c];
    out += "<li><span class=\"mono\">xid " + std::to_string(commit.xid) + "</span> committed " +
           E(metrics::UtcText(commit.commit_unix)) + " at " +
           E(metrics::LsnText(commit.commit_lsn)) + " &middot; ";
    if (commit.session) {
      out += "application <b>" + E(commit.session->application_name) + "</b>, user " +
             E(commit.session->user) + ", client " + E(commit.session->client_addr);
    } else {
      out += "<span class=\"meta\">session not seen</span>";
    }
    for (const auto& change : commit.changes) {
      out += "<br><span class=\"mono\">" + E(metrics::DescribeChange(change)) + "</span>";
    }
    if (commit.truncated) out += "<br><span class=\"meta\">more changes not kept</span>";
    out += "</li>";
  }
  out += "</ul></td></tr>\n";
}

void RenderKeys(std::string& out, const InvariantView& view, double now_unix) {
  std::vector<std::string> columns = KeyColumns(view.first_keys);
  out += "<div class=\"scroll\"><table class=\"keys\"><tr>";
  for (const auto& column : columns) out += "<th>" + E(column) + "</th>";
  out += "<th>offending</th><th>violated since</th></tr>\n";
  for (size_t i = 0; i < view.first_keys.size(); ++i) {
    const auto& violation = view.first_keys[i];
    out += "<tr>";
    for (const auto& column : columns) {
      out += "<td class=\"mono\">";
      for (const auto& label : violation.labels) {
        if (label.name == column) out += E(label.value);
      }
      out += "</td>";
    }
    out += "<td class=\"num\">" + E(FormatNumber(violation.value)) + "</td>";
    double since = i < view.first_keys_since.size() ? view.first_keys_since[i] : 0;
    out += "<td class=\"meta\">" + E(since > 0 ? FormatWhen(since, now_unix) : "not followed") +
           "</td></tr>\n";
    const auto* cause = i < view.first_keys_cause.size() ? view.first_keys_cause[i].get() : nullptr;
    if (cause && !cause->commits.empty()) RenderCause(out, *cause, columns.size() + 2);
  }
  out += "</table></div>\n";
  if (view.rows > view.first_keys.size()) {
    out += "<p class=\"meta\">and " + std::to_string(view.rows - view.first_keys.size()) +
           " more keys: see <a href=\"/api/invariants\">/api/invariants</a></p>\n";
  }
}

void RenderDetail(std::string& out, const metrics::DetailRows& detail) {
  if (!detail.error.empty()) {
    out += "<p class=\"err\">the detail query failed: " + E(detail.error) + "</p>\n";
    return;
  }
  out += "<p class=\"meta\">first offending rows";
  if (detail.truncated) out += " (more rows or longer values in /api/invariants)";
  out += ":</p>\n<div class=\"scroll\"><table class=\"detail\"><tr>";
  for (const auto& column : detail.columns) out += "<th>" + E(column) + "</th>";
  out += "</tr>\n";
  for (const auto& row : detail.rows) {
    out += "<tr>";
    for (size_t i = 0; i < detail.columns.size(); ++i) {
      if (i < row.size() && row[i]) {
        out += "<td class=\"mono\">" + E(*row[i]) + "</td>";
      } else {
        out += "<td class=\"meta\">NULL</td>";
      }
    }
    out += "</tr>\n";
  }
  out += "</table></div>\n";
}

void RenderViolated(std::string& out, const InvariantView& view, double now_unix) {
  out += "<article class=\"card violated\" id=\"invariant-" + E(view.name) +
         "\"><h3><span class=\"badge violated\">VIOLATED</span> <span class=\"name\">" +
         E(view.name) + "</span></h3>\n<p class=\"meta\">";
  out += "violated since " + E(FormatWhen(view.since_unix, now_unix));
  out += " &middot; " + E(FormatNumber(view.total)) +
         (view.total == 1 ? " offending row" : " offending rows") + " across " +
         std::to_string(view.rows) + (view.rows == 1 ? " key" : " keys");
  out += " &middot; check " + E(view.check);
  if (!view.runbook_url.empty()) {
    out += " &middot; <a class=\"runbook\" rel=\"noopener noreferrer\" href=\"" +
           E(view.runbook_url) + "\">runbook</a>";
  }
  out += "</p>\n";
  if (!view.help.empty()) out += "<p>" + E(view.help) + "</p>\n";
  RenderKeys(out, view, now_unix);
  if (view.detail) RenderDetail(out, *view.detail);
  out += "</article>\n";
}

// Keys that were violated and are no longer: what on-call asks after the
// page cleared. In memory only, since lifecycle_since_unix.
void RenderHealed(std::string& out, const PageModel& model) {
  if (model.healed.empty()) return;
  out += "<h3>Recently healed</h3>\n<div class=\"scroll\"><table class=\"healed\"><tr>"
         "<th>invariant</th><th>key</th><th>violated from</th><th>lasted</th></tr>\n";
  for (const auto& healed : model.healed) {
    out += "<tr><td>" + E(healed.invariant) + "</td><td class=\"mono\">" +
           E(KeyText(healed.labels)) + "</td><td>" + E(FormatUtc(healed.since_unix)) +
           "</td><td class=\"num\">" + E(FormatAge(healed.healed_unix - healed.since_unix)) +
           "</td></tr>\n";
  }
  out += "</table></div>\n<p class=\"meta\">as seen by this process since " +
         E(FormatUtc(model.lifecycle_since_unix)) + "; a restart starts the list afresh.</p>\n";
}

void RenderUnknown(std::string& out, const InvariantView& view) {
  out += "<article class=\"card unknown\" id=\"invariant-" + E(view.name) +
         "\"><h3><span class=\"badge unknown\">UNKNOWN</span> <span class=\"name\">" +
         E(view.name) + "</span></h3>\n<p class=\"meta\">" + E(view.reason) + "</p></article>\n";
}

}  // namespace

void RenderInvariants(std::string& out, const PageModel& model) {
  out += "<section id=\"invariants\"><h2>Invariants</h2>\n";
  if (model.invariants.empty()) {
    out += "<p class=\"meta\">" +
           E(model.polled ? "No invariant is configured." : "No poll has been published yet.") +
           "</p></section>\n";
    return;
  }
  // What needs a person first: the violated, then those without a verdict.
  for (const auto& view : model.invariants) {
    if (view.verdict == Verdict::kViolated) RenderViolated(out, view, model.now_unix);
  }
  for (const auto& view : model.invariants) {
    if (view.verdict == Verdict::kUnknown) RenderUnknown(out, view);
  }
  bool any_ok = false;
  for (const auto& view : model.invariants) {
    if (view.verdict != Verdict::kOk) continue;
    if (!any_ok) out += "<ul class=\"oklist\">\n";
    any_ok = true;
    out += "<li id=\"invariant-" + E(view.name) + "\"><span class=\"badge ok\">OK</span> " +
           E(view.name) + " <span class=\"meta\">since " +
           E(FormatWhen(view.since_unix, model.now_unix)) + "</span></li>\n";
  }
  if (any_ok) out += "</ul>\n";
  RenderHealed(out, model);
  out += "</section>\n";
}

}  // namespace seatwatch::page::detail
