#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace seatwatch::log {

// Structured (logfmt) lines on stderr: ts=... level=... msg="..." key=value.
// Thread-safe: each line is written whole under a mutex.
enum class Level { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

using Field = std::pair<std::string_view, std::string>;

void SetLevel(Level level);
// Throws std::invalid_argument for anything but debug, info, warn, error.
Level ParseLevel(std::string_view name);
bool Enabled(Level level);

void Write(Level level, std::string_view msg, std::initializer_list<Field> fields = {});
inline void Debug(std::string_view msg, std::initializer_list<Field> fields = {}) {
  Write(Level::kDebug, msg, fields);
}
inline void Info(std::string_view msg, std::initializer_list<Field> fields = {}) {
  Write(Level::kInfo, msg, fields);
}
inline void Warn(std::string_view msg, std::initializer_list<Field> fields = {}) {
  Write(Level::kWarn, msg, fields);
}
inline void Error(std::string_view msg, std::initializer_list<Field> fields = {}) {
  Write(Level::kError, msg, fields);
}

// Renders one logfmt line without the timestamp; exposed for tests.
std::string Format(Level level, std::string_view msg, std::initializer_list<Field> fields);

}  // namespace seatwatch::log
