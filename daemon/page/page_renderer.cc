#include "page/page_renderer.h"

#include <cctype>

#include "page/html_escape.h"
#include "page/page_format.h"
#include "page/page_sections.h"

namespace seatwatch::page {

namespace detail {

std::string E(const std::string& text) { return HtmlEscape(text); }

}  // namespace detail

namespace {

using detail::E;

// Inline and small: the page must work air-gapped and on a phone. System
// fonts only; tables scroll sideways inside their box on a narrow screen.
constexpr const char* kStyle = R"css(
:root{--ok:#1b7f3b;--bad:#b3261e;--warn:#8a5a00;--unk:#5f6368;--line:#d9dce1;--soft:#f4f5f7}
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:#1f2328;background:#fff}
main{max-width:1100px;margin:0 auto;padding:12px}
h1{font-size:1.5em;margin:0}h2{font-size:1.15em;margin:1.4em 0 .5em;border-bottom:1px solid var(--line);padding-bottom:.2em}
h3{font-size:1em;margin:.9em 0 .3em}.card h3{margin-top:0}
.banner{padding:14px 16px;color:#fff;border-radius:6px}
.banner.ok{background:var(--ok)}.banner.violated{background:var(--bad)}.banner.unknown{background:var(--unk)}
.banner p{margin:.3em 0 0}
ul.summary{margin:.6em 0;padding-left:1.2em;font-weight:600}ul.summary a{color:var(--bad)}
.badge{display:inline-block;padding:0 .45em;border-radius:4px;font-weight:700;font-size:.85em;color:#fff}
.badge.ok{background:var(--ok)}.badge.violated{background:var(--bad)}.badge.unknown{background:var(--unk)}
.badge.warn{background:var(--warn)}
.card{border:1px solid var(--line);border-left:5px solid var(--unk);border-radius:6px;padding:10px 12px;margin:10px 0}
.card.violated{border-left-color:var(--bad)}.card.unknown{border-left-color:var(--unk)}
.meta{color:#555;font-size:.92em}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;margin:.4em 0;font-size:.92em}
th,td{border:1px solid var(--line);padding:3px 7px;text-align:left;vertical-align:top}
th{background:var(--soft)}
td.num{text-align:right;font-variant-numeric:tabular-nums}
code,.mono{font-family:"DejaVu Sans Mono",ui-monospace,Menlo,Consolas,monospace;overflow-wrap:anywhere}
code{font-size:.9em}
td.mono{overflow-wrap:break-word}
.oklist{list-style:none;padding:0;margin:.4em 0}.oklist li{margin:.15em 0}
ul.tree,ul.tree ul{list-style:none;margin:0;padding-left:1.3em}
ul.tree{padding-left:0}
ul.tree ul{border-left:2px solid var(--line);margin-left:.5em}
ul.tree li{margin:.35em 0}
.node{padding:4px 8px;border-radius:4px;background:var(--soft)}
.node.root{background:#fdecea;border:1px solid #f3b7b1}
.state.idle{color:var(--bad);font-weight:700}
.row{background:#fff3cd;padding:0 .3em;border-radius:3px}
.query{color:#444;margin:.2em 0 0 .2em}
.err{color:var(--bad)}
footer{margin:2em 0 1em;padding-top:.6em;border-top:1px solid var(--line);font-size:.92em;color:#555}
footer a{margin-right:1em}
)css";

// "OK", "VIOLATED" or "UNKNOWN": the title's word; lower case, the CSS class.
const char* VerdictWord(Verdict verdict) {
  switch (verdict) {
    case Verdict::kOk:
      return "OK";
    case Verdict::kViolated:
      return "VIOLATED";
    case Verdict::kUnknown:
      break;
  }
  return "UNKNOWN";
}

std::string VerdictClass(Verdict verdict) {
  std::string word = VerdictWord(verdict);
  for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return word;
}

std::string Headline(const PageModel& model) {
  size_t total = model.invariants.size();
  switch (model.Overall()) {
    case Verdict::kOk:
      return total == 1 ? "OK: the one invariant holds"
                        : "OK: all " + std::to_string(total) + " invariants hold";
    case Verdict::kViolated:
      return "VIOLATED: " + std::to_string(model.violated) + " of " + std::to_string(total) +
             (total == 1 ? " invariant" : " invariants");
    case Verdict::kUnknown:
      break;
  }
  if (!model.polled) return "UNKNOWN: no poll yet";
  if (total == 0) return "UNKNOWN: no invariant is configured";
  return "UNKNOWN: " + std::to_string(model.unknown) + " of " + std::to_string(total) +
         (total == 1 ? " invariant" : " invariants") + " without a verdict";
}

void RenderBanner(std::string& out, const PageModel& model) {
  Verdict verdict = model.Overall();
  out += "<header class=\"banner ";
  out += VerdictClass(verdict);
  out += "\" id=\"verdict\"><h1>" + E(Headline(model)) + "</h1><p>";
  if (!model.polled) {
    out += "seatwatch has not published a poll yet";
  } else {
    out += model.database_up ? "database reachable" : "<strong>database UNREACHABLE</strong>";
    out += " &middot; last poll " + E(FormatWhen(model.last_poll_unix, model.now_unix));
    if (!model.database_up) {
      out += " &middot; last successful poll " +
             E(FormatWhen(model.last_successful_poll_unix, model.now_unix));
    }
  }
  out += "</p></header>\n";
}

void RenderFooter(std::string& out, const PageModel& model) {
  out += "<footer><p>";
  for (const char* path : {"/metrics", "/api/invariants", "/api/locks", "/readyz", "/healthz"}) {
    out += "<a href=\"";
    out += path;
    out += "\">";
    out += path;
    out += "</a>";
  }
  out += "</p><p>seatwatch " + E(model.version) + " &middot; rendered " +
         E(FormatUtc(model.now_unix)) +
         " from the last poll (no database access on a page view) &middot; reloads every 5s</p>"
         "</footer>\n";
}

}  // namespace

std::string PageTitle(Verdict verdict) { return std::string("seatwatch: ") + VerdictWord(verdict); }

std::string RenderStatusPage(const PageModel& model) {
  std::string out;
  out.reserve(16 << 10);
  out +=
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta http-equiv=\"refresh\" content=\"5\">\n<title>";
  out += PageTitle(model.Overall());
  out += "</title>\n<style>";
  out += kStyle;
  out += "</style></head>\n<body><main>\n";
  RenderBanner(out, model);
  detail::RenderSummary(out, model);
  detail::RenderInvariants(out, model);
  detail::RenderLocks(out, model);
  detail::RenderHolds(out, model);
  detail::RenderServers(out, model);
  detail::RenderChecks(out, model);
  RenderFooter(out, model);
  out += "</main></body></html>\n";
  return out;
}

}  // namespace seatwatch::page
