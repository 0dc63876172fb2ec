#include "page/page_format.h"
#include "page/page_sections.h"

namespace seatwatch::page::detail {

namespace {

std::string Row(const std::string& name, const std::string& value_html) {
  return "<tr><th>" + E(name) + "</th><td>" + value_html + "</td></tr>\n";
}

// Off ([cleanup] enabled = false) is not configured: nothing to show.
bool CleanupShown(const PageModel& model) { return !model.cleanup || model.cleanup->enabled; }

void RenderCleanup(std::string& out, const PageModel& model) {
  out += "<h3>Cleanup</h3>\n";
  const cleanup::CleanupStatus* status = model.cleanup.get();
  if (!status) {
    out += "<p class=\"meta\">The cleanup's status is not known.</p>\n";
    return;
  }
  std::string role = status->leader ? "<span class=\"badge ok\">LEADER</span> this instance runs "
                                      "the cleanup"
                     : status->in_recovery
                         ? "<span class=\"badge warn\">WAITING</span> its connection reaches a "
                           "standby (in recovery): it frees nothing until that server is promoted "
                           "or [database] dsn reaches the primary"
                         : "<span class=\"badge unknown\">STANDBY</span> another "
                           "instance holds the leader lock, or no connection";
  // A dry run changes nothing: its counts are of holds it would have freed.
  const char* freed = status->dry_run ? "would have freed " : "freed ";
  if (status->dry_run) role += " <span class=\"badge warn\">DRY RUN</span> (nothing is changed)";
  out += "<div class=\"scroll\"><table class=\"cleanup\">\n";
  out += Row("role", role);
  out += Row("interval", E(FormatAge(status->interval_seconds)));
  std::string last_run = "none yet";
  if (status->last_run_unix > 0) {
    last_run = E(FormatWhen(status->last_run_unix, model.now_unix)) + ": " +
               (status->last_run_result == "ok"
                    ? "<span class=\"badge ok\">ok</span>"
                    : "<span class=\"badge violated\">" + E(status->last_run_result) + "</span>") +
               ", " + freed + std::to_string(status->last_run_freed);
    if (!status->last_run_error.empty()) {
      last_run += " <span class=\"err\">" + E(status->last_run_error) + "</span>";
    }
  }
  out += Row("last run", last_run);
  out += Row("last success", E(FormatWhen(status->last_success_unix, model.now_unix)));
  out += Row(std::string(freed) + "since start", std::to_string(status->freed));
  out += Row("batches", "ok " + std::to_string(status->batches_ok) + ", lock_timeout " +
                            std::to_string(status->batches_lock_timeout) + ", error " +
                            std::to_string(status->batches_error));
  out += "</table></div>\n";
}

void RenderHoldsCounts(std::string& out, const PageModel& model) {
  if (!model.holds) {
    out += "<p class=\"meta\">No holds data: " + E(model.holds_source.unavailable) + "</p>\n";
    return;
  }
  const checks::HoldsCounts& holds = *model.holds;
  out += "<div class=\"scroll\"><table class=\"holds\">\n";
  std::string expired = "<strong>" + E(FormatNumber(holds.expired)) + "</strong>";
  if (holds.expired > 0) {
    expired += " (the oldest expired " + E(FormatAge(holds.expired_oldest_seconds)) + " ago)";
  }
  out += Row("expired holds (backlog)", expired);
  out += Row("active holds", E(FormatNumber(holds.active)));
  out += Row("payments lapsed", E(FormatNumber(holds.payments_lapsed)));
  out += "</table></div>\n";
}

}  // namespace

// Left out when neither [holds] nor the cleanup is configured.
void RenderHolds(std::string& out, const PageModel& model) {
  bool cleanup_shown = model.polled && CleanupShown(model);
  if (!model.holds_source.configured && !cleanup_shown) return;
  out += "<section id=\"holds\"><h2>Holds and cleanup</h2>\n";
  if (model.holds_source.configured) RenderHoldsCounts(out, model);
  if (cleanup_shown) RenderCleanup(out, model);
  out += "</section>\n";
}

void RenderChecks(std::string& out, const PageModel& model) {
  out += "<section id=\"checks\"><h2>Checks</h2>\n";
  if (model.checks.empty()) {
    out += "<p class=\"meta\">No check has been scheduled yet.</p></section>\n";
    return;
  }
  out +=
      "<div class=\"scroll\"><table class=\"checks\"><tr><th>check</th><th>last run</th>"
      "<th>last success</th><th>took</th><th>every</th><th>errors by reason</th></tr>\n";
  for (const auto& check : model.checks) {
    out += "<tr><td><code>" + E(check.name) + "</code>";
    if (check.incremental && !check.incremental->mode.empty()) {
      const std::string& reason = check.incremental->mode_reason;
      out += " <span class=\"meta\">" + E(check.incremental->mode) +
             (reason.empty() ? "" : " (" + E(reason) + ")") + "</span>";
    }
    out += "</td><td>";
    if (!check.has_run) {
      out += "<span class=\"badge unknown\">not run</span>";
    } else if (check.success) {
      out += "<span class=\"badge ok\">ok</span>";
    } else {
      out += "<span class=\"badge violated\">failed</span> " + E(check.last_reason) +
             "<br><span class=\"err\">" + E(check.last_error) + "</span>";
    }
    out += "</td><td>" + E(FormatWhen(check.last_success_unix, model.now_unix)) + "</td>";
    out += "<td class=\"num\">" + (check.has_run ? E(FormatAge(check.duration_seconds)) : "") +
           "</td><td class=\"num\">" + E(FormatAge(check.interval_seconds)) + "</td><td>";
    bool any = false;
    for (const auto& [reason, count] : check.errors) {
      if (count == 0) continue;
      out += std::string(any ? ", " : "") + E(reason) + " " + std::to_string(count);
      any = true;
    }
    if (!any) out += "<span class=\"meta\">none</span>";
    out += "</td></tr>\n";
  }
  out += "</table></div></section>\n";
}

}  // namespace seatwatch::page::detail
