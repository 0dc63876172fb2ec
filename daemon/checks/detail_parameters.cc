#include "checks/detail_parameters.h"

#include <set>

#include "db/array_literal.h"

namespace seatwatch::checks {

std::vector<std::string> DetailParameters(const std::vector<std::string>& labels,
                                          const std::vector<metrics::Violation>& violations,
                                          const std::vector<std::string>& params, size_t used) {
  std::vector<std::string> out;
  for (const auto& label : labels) {
    if (out.size() >= used) return out;
    std::set<std::string> values;
    for (const auto& violation : violations) {
      for (const auto& l : violation.labels) {
        if (l.name == label) values.insert(l.value);
      }
    }
    out.push_back(db::TextArrayLiteral({values.begin(), values.end()}));
  }
  for (const auto& param : params) {
    if (out.size() >= used) break;
    out.push_back(param);
  }
  return out;
}

}  // namespace seatwatch::checks
