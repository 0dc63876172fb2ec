#include "page/page_sections.h"
#include "page/page_summary.h"

namespace seatwatch::page::detail {

void RenderSummary(std::string& out, const PageModel& model) {
  std::vector<SummaryLine> lines = SummarizeProblems(model);
  if (lines.empty()) return;
  out += "<section id=\"summary\"><ul class=\"summary\">\n";
  for (const auto& line : lines) {
    out += "<li><a href=\"#" + E(line.anchor) + "\">" + E(line.text) + "</a></li>\n";
  }
  out += "</ul></section>\n";
}

}  // namespace seatwatch::page::detail
