#include "util/log.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <stdexcept>

#include "util/json_writer.h"
#include "util/utf8.h"

namespace seatwatch::log {

namespace {

std::atomic<int> g_level{static_cast<int>(Level::kInfo)};
std::mutex g_write_mutex;

const char* LevelName(Level level) {
  switch (level) {
    case Level::kDebug: return "debug";
    case Level::kInfo: return "info";
    case Level::kWarn: return "warn";
    case Level::kError: return "error";
  }
  return "info";
}

// A control character (other than the three escaped by name) or a
// bidirectional control of `value` at i, as its length in bytes; 0 if none.
// Values carry database text (query texts, application names): an ESC
// sequence could drive the terminal that shows the log, a right-to-left
// override reverse the rest of the line.
size_t ShownByBytes(std::string_view value, size_t i) {
  auto c = static_cast<unsigned char>(value[i]);
  if ((c < 0x20 && c != '\n' && c != '\t' && c != '\r') || c == 0x7f) return 1;
  if (c < 0x80) return 0;
  size_t length = util::Utf8SequenceLength(value, i);
  return length > 1 && util::IsBidiControl(value, i, length) ? length : 0;
}

void AppendValue(std::string& out, std::string_view value) {
  bool needs_quotes = value.empty();
  for (size_t i = 0; i < value.size() && !needs_quotes; ++i) {
    char c = value[i];
    needs_quotes = c == ' ' || c == '"' || c == '=' || static_cast<unsigned char>(c) < 0x20 ||
                   ShownByBytes(value, i) > 0;
  }
  if (!needs_quotes) {
    out.append(value);
    return;
  }
  out.push_back('"');
  for (size_t i = 0; i < value.size();) {
    if (size_t bytes = ShownByBytes(value, i)) {
      util::AppendHexBytes(out, value.substr(i, bytes));
      i += bytes;
      continue;
    }
    // \b and \f never get here: ShownByBytes takes every control character
    // but \n, \t and \r.
    char c = value[i++];
    if (const char* escape = util::ShortEscape(c)) {
      out.append(escape);
    } else {
      out.push_back(c);
    }
  }
  out.push_back('"');
}

}  // namespace

void SetLevel(Level level) { g_level.store(static_cast<int>(level)); }

Level ParseLevel(std::string_view name) {
  if (name == "debug") return Level::kDebug;
  if (name == "info") return Level::kInfo;
  if (name == "warn" || name == "warning") return Level::kWarn;
  if (name == "error") return Level::kError;
  throw std::invalid_argument("log level must be one of debug, info, warn, error (got \"" +
                              std::string(name) + "\")");
}

bool Enabled(Level level) { return static_cast<int>(level) >= g_level.load(); }

std::string Format(Level level, std::string_view msg, std::initializer_list<Field> fields) {
  std::string line = "level=";
  line.append(LevelName(level));
  line.append(" msg=");
  AppendValue(line, msg);
  for (const auto& [key, value] : fields) {
    line.push_back(' ');
    line.append(key);
    line.push_back('=');
    AppendValue(line, value);
  }
  return line;
}

void Write(Level level, std::string_view msg, std::initializer_list<Field> fields) {
  if (!Enabled(level)) return;
  auto now = std::chrono::system_clock::now();
  std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()) % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char stamp[80];
  std::snprintf(stamp, sizeof stamp, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<int>(millis.count()));
  std::string line = "ts=";
  line.append(stamp);
  line.push_back(' ');
  line.append(Format(level, msg, fields));
  line.push_back('\n');
  std::lock_guard<std::mutex> lock(g_write_mutex);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace seatwatch::log
