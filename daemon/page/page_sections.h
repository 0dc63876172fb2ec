#pragma once

#include <string>

#include "page/page_model.h"

// The status page's sections, each appending its HTML to `out`. Internal to
// page/; RenderStatusPage puts them together. Pure.
namespace seatwatch::page::detail {

void RenderSummary(std::string& out, const PageModel& model);
void RenderInvariants(std::string& out, const PageModel& model);
void RenderLocks(std::string& out, const PageModel& model);
void RenderHolds(std::string& out, const PageModel& model);
void RenderChecks(std::string& out, const PageModel& model);
void RenderServers(std::string& out, const PageModel& model);

// The escaped text, for short appends.
std::string E(const std::string& text);

}  // namespace seatwatch::page::detail
