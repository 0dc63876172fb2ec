#pragma once

#include <string>
#include <vector>

#include <prometheus/metric_family.h>

namespace seatwatch::metrics {

// Text exposition format; families without samples are left out (they would
// print HELP and TYPE with nothing under them). Pure.
std::string RenderText(std::vector<prometheus::MetricFamily> families);

}  // namespace seatwatch::metrics
