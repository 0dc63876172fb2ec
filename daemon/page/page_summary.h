#pragma once

#include <string>
#include <vector>

#include "page/page_model.h"

namespace seatwatch::page {

// One problem in a line, for the top of the page: what is wrong and how
// much, linking to the section that shows it.
struct SummaryLine {
  std::string text;    // "sold_seat_without_ticket: 1 event (2 offending rows)"
  std::string anchor;  // the id of the card or section it points to
};

// How many blocking roots the summary names; the rest are counted.
inline constexpr size_t kSummaryRoots = 3;

// The page's problems, most urgent first: violated invariants (their
// offending keys counted), invariants without a verdict, blocking roots
// ("4 sessions blocked by pid 4242"), wait cycles, and failing checks that
// feed no invariant (those are counted as invariants without a verdict).
// Empty when nothing needs a person. Pure.
std::vector<SummaryLine> SummarizeProblems(const PageModel& model);

// "event" for keys labelled event_id alone; "key" otherwise; plural past 1.
std::string KeyNoun(const std::vector<metrics::Violation>& keys, size_t count);

}  // namespace seatwatch::page
