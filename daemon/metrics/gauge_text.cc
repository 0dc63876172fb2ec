#include "metrics/gauge_text.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace seatwatch::metrics {

namespace {

void AppendEscaped(std::string& out, const std::string& value) {
  for (char c : value) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '\\' || c == '"') out += '\\';
    out += c;
  }
}

// As prometheus-cpp's text serializer writes a value.
void AppendValue(std::string& out, double value) {
  if (std::isnan(value)) {
    out += "Nan";
  } else if (std::isinf(value)) {
    out += value < 0 ? "-Inf" : "+Inf";
  } else {
    char buffer[64];
    int n = std::snprintf(buffer, sizeof buffer, "%.*g",
                          std::numeric_limits<double>::max_digits10 - 1, value);
    out.append(buffer, static_cast<size_t>(n));
  }
}

}  // namespace

std::string RowsToGaugeText(const std::string& name, const std::string& help,
                            const db::Rows& rows, const ColumnBinding& binding) {
  std::string out;
  for (const auto& row : rows.values) {
    const auto& cell = row[binding.value_index];
    if (!cell) continue;
    double value = ParseNumber(*cell);
    if (out.empty()) {
      if (!help.empty()) out += "# HELP " + name + " " + help + "\n";
      out += "# TYPE " + name + " gauge\n";
    }
    out += name;
    if (!binding.label_indexes.empty()) {
      out += '{';
      for (size_t i = 0; i < binding.label_indexes.size(); ++i) {
        if (i) out += ',';
        out += binding.label_names[i];
        out += "=\"";
        const auto& label = row[binding.label_indexes[i]];
        if (label) AppendEscaped(out, *label);
        out += '"';
      }
      out += '}';
    }
    out += ' ';
    AppendValue(out, value);
    out += '\n';
  }
  return out;
}

}  // namespace seatwatch::metrics
