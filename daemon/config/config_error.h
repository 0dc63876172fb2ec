#pragma once

#include <stdexcept>
#include <string>

namespace seatwatch::config {

// A configuration problem, already phrased as "path:line:col: key: problem".
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace seatwatch::config
