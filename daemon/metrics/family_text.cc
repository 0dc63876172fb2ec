#include "metrics/family_text.h"

#include <algorithm>
#include <sstream>

#include <prometheus/text_serializer.h>

namespace seatwatch::metrics {

std::string RenderText(std::vector<prometheus::MetricFamily> families) {
  families.erase(std::remove_if(families.begin(), families.end(),
                                [](const prometheus::MetricFamily& f) { return f.metric.empty(); }),
                 families.end());
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
}

}  // namespace seatwatch::metrics
