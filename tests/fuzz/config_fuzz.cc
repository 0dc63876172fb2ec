// The TOML config parser and validator, fed arbitrary text. A bad config
// must be refused with a ConfigError (or std::invalid_argument), which main
// turns into exit 2 and a path:line message; anything else that escapes (or
// a crash, a hang, a sanitizer report) is a finding.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "config/config_error.h"
#include "config/parse.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    seatwatch::config::ParseConfig(text, "/fuzz/config/seatwatch.toml");
  } catch (const seatwatch::config::ConfigError&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
