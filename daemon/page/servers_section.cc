#include <string>

#include "page/page_format.h"
#include "page/page_sections.h"

namespace seatwatch::page::detail {

namespace {

// The lanes that must reach the primary: a standby there is a fault.
bool NeedsPrimary(const std::string& lane) { return lane == "locks"; }

std::string RoleCell(const metrics::LaneServer& server) {
  if (!server.facts.in_recovery) return "<span class=\"badge ok\">PRIMARY</span>";
  std::string cell = "<span class=\"badge unknown\">STANDBY</span> in recovery";
  if (NeedsPrimary(server.lane)) cell += " <span class=\"err\">this lane needs the primary</span>";
  return cell;
}

std::string LagCell(const db::ServerFacts& facts) {
  if (!facts.in_recovery) return "<span class=\"meta\">none (a primary)</span>";
  if (facts.replica_lag_seconds <= 0)
    return E(FormatAge(0)) + " <span class=\"meta\">caught up</span>";
  return "<strong>" + E(FormatAge(facts.replica_lag_seconds)) + "</strong> behind";
}

}  // namespace

void RenderServers(std::string& out, const PageModel& model) {
  out += "<section id=\"servers\"><h2>Database servers</h2>\n";
  if (model.servers.empty()) {
    out +=
        "<p class=\"meta\">Not connected: no lane reached its database server on its last "
        "poll.</p>\n";
  } else {
    out +=
        "<div class=\"scroll\"><table class=\"servers\"><tr><th>lane</th><th>server</th>"
        "<th>replay lag</th><th>timeline</th><th>system identifier</th></tr>\n";
    for (const auto& server : model.servers) {
      const db::ServerFacts& facts = server.facts;
      out += "<tr><td><code>" + E(server.lane) + "</code></td><td>" + RoleCell(server) +
             "</td><td>" + LagCell(facts) + "</td><td class=\"num\">" +
             (facts.timeline > 0 ? std::to_string(facts.timeline)
                                 : "<span class=\"meta\">unknown</span>") +
             "</td><td>" +
             (facts.system_identifier.empty() ? "<span class=\"meta\">unknown</span>"
                                              : "<code>" + E(facts.system_identifier) + "</code>") +
             "</td></tr>\n";
    }
    out += "</table></div>\n";
  }
  if (model.polled) {
    out += "<p>Failovers seen since start: <strong>" + std::to_string(model.failovers_total) +
           "</strong> <span class=\"meta\">(a lane found the database on another server: a higher "
           "timeline, or another system identifier)</span></p>\n";
  }
  out += "</section>\n";
}

}  // namespace seatwatch::page::detail
