#pragma once

#include <string>

#include "page/page_model.h"

namespace seatwatch::page {

// The fixed <title> of the page for a verdict: "seatwatch: OK",
// "seatwatch: VIOLATED" or "seatwatch: UNKNOWN". Nothing from the database
// is in it.
std::string PageTitle(Verdict verdict);

// The status page served at `/`: one self-contained HTML document (inline
// CSS, no script, no external asset, so it works air-gapped) that reloads
// itself every 5 seconds and reads on a phone. In order: the verdict and
// each invariant (violated ones first, with since when, how many offending
// rows, the first keys and detail rows), the blocking forest as an indented
// tree with its hot rows, the holds backlog and the cleanup, each check's
// health, then links to /metrics and the APIs. Every string that came from
// the database is HTML-escaped. Pure.
std::string RenderStatusPage(const PageModel& model);

}  // namespace seatwatch::page
