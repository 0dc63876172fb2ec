#include <array>
#include <utility>

#include "declare/kind_sql.h"

namespace seatwatch::declare {

namespace {

// The kinds, in the documentation's order.
using Entry = std::pair<std::string_view, const KindSql& (*)()>;
constexpr std::array<Entry, 5> kKinds = {{
    {"exists", &ExistsKind},
    {"unique", &UniqueKind},
    {"at_most", &AtMostKind},
    {"counter", &CounterKind},
    {"check", &CheckKind},
}};

}  // namespace

const KindSql* KindNamed(std::string_view name) {
  for (const auto& [kind, instance] : kKinds) {
    if (kind == name) return &instance();
  }
  return nullptr;
}

std::vector<std::string> KindNames() {
  std::vector<std::string> names;
  for (const auto& entry : kKinds) names.emplace_back(entry.first);
  return names;
}

}  // namespace seatwatch::declare
