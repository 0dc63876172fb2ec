#pragma once

// Expectations on rendered text (the metrics exposition, reports, JSON):
// one failure per missing or unwanted part, naming it. Header-only.

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

namespace seatwatch::testing {

// Whether `line` is a whole line of `text`.
inline bool HasLine(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos || text.rfind(line + "\n", 0) == 0;
}

inline void ExpectLines(const std::string& text, std::initializer_list<std::string> lines) {
  for (const std::string& line : lines) {
    EXPECT_TRUE(HasLine(text, line)) << line << "\nin\n" << text;
  }
}

inline void ExpectContains(const std::string& text, std::initializer_list<std::string> parts) {
  for (const std::string& part : parts) {
    EXPECT_NE(text.find(part), std::string::npos) << part << "\nin\n" << text;
  }
}

inline void ExpectLacks(const std::string& text, std::initializer_list<std::string> parts) {
  for (const std::string& part : parts) {
    EXPECT_EQ(text.find(part), std::string::npos) << part << "\nin\n" << text;
  }
}

}  // namespace seatwatch::testing
