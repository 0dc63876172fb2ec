// Durations ("250ms", "1m30s"): parsing arbitrary text never crashes or
// overflows (UBSan aborts on signed overflow), an accepted duration is never
// negative, and its rendering parses back to the same value.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

#include "util/duration.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using seatwatch::util::FormatDuration;
  using seatwatch::util::ParseDuration;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  seatwatch::util::Millis value;
  try {
    value = ParseDuration(text);
  } catch (const std::invalid_argument&) {
    return 0;
  }
  if (value.count() < 0) std::abort();
  std::string rendered = FormatDuration(value);
  if (ParseDuration(rendered) != value) std::abort();
  (void)seatwatch::util::ToSeconds(value);
  return 0;
}
