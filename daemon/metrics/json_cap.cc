#include "metrics/json_cap.h"

#include <string_view>
#include <vector>

namespace seatwatch::metrics {

namespace {

constexpr std::string_view kMarker = "\"truncated\":true}";

// A place the document can be cut: everything before `position` is kept.
struct Cut {
  size_t position = 0;
  char inner = 0;             // the open container inside the top level, or 0
  bool top_has_member = false;  // whether the top-level object keeps a member
};

}  // namespace

std::string CapJson(std::string json, size_t max_bytes) {
  if (json.size() <= max_bytes) return json;
  size_t start = json.find_first_not_of(" \t\r\n");
  if (start == std::string::npos || json[start] != '{' || max_bytes < 2 + kMarker.size()) {
    return "{" + std::string(kMarker);
  }
  // Room for the closing bracket of the inner container, the comma and the
  // marker with the top level's closing brace.
  size_t budget = max_bytes - 2 - kMarker.size();
  Cut best{start + 1, 0, false};
  std::vector<char> open;  // the containers open at the current position
  bool in_string = false;
  bool escaped = false;
  for (size_t i = start; i < json.size() && i <= budget; ++i) {
    char c = json[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '{':
      case '[':
        open.push_back(c);
        // An empty container directly inside the top level is a cut too.
        if (open.size() == 2 && i + 1 <= budget) best = Cut{i + 1, c, true};
        break;
      case '}':
      case ']':
        if (!open.empty()) open.pop_back();
        break;
      case ',':
        // The element before the comma is complete.
        if (open.size() == 1) best = Cut{i, 0, true};
        if (open.size() == 2) best = Cut{i, open.back(), true};
        break;
      default:
        break;
    }
  }
  std::string out = json.substr(0, best.position);
  if (best.inner) out += best.inner == '[' ? ']' : '}';
  if (best.top_has_member) out += ',';
  out += kMarker;
  return out;
}

}  // namespace seatwatch::metrics
