#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace seatwatch::util {

// The parts in order with `separator` between them ("" for none).
std::string Join(const std::vector<std::string>& parts, std::string_view separator);

}  // namespace seatwatch::util
