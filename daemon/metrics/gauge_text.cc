#include "metrics/gauge_text.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "metrics/exposition_escape.h"
#include "metrics/series_guard.h"

namespace seatwatch::metrics {

namespace {

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

std::string GaugeHeader(const std::string& name, const std::string& help) {
  std::string out;
  if (!help.empty()) {
    out += "# HELP " + name + " ";
    AppendEscapedHelp(out, help);
    out += "\n";
  }
  out += "# TYPE " + name + " gauge\n";
  return out;
}

void AppendGaugeSamples(std::string& out, const std::string& name, const db::Rows& rows,
                        const ColumnBinding& binding) {
  DuplicateSeriesGuard guard(name, rows, binding);
  for (size_t r = 0; r < rows.values.size(); ++r) {
    const auto& row = rows.values[r];
    const auto& cell = row[binding.value_index];
    if (!cell) continue;
    double value = ParseValue(*cell, binding);
    guard.Add(r);
    out += name;
    if (!binding.label_indexes.empty()) {
      out += '{';
      for (size_t i = 0; i < binding.label_indexes.size(); ++i) {
        if (i) out += ',';
        out += binding.label_names[i];
        out += "=\"";
        const auto& label = row[binding.label_indexes[i]];
        if (label) AppendEscapedLabelValue(out, *label);
        out += '"';
      }
      out += '}';
    }
    out += ' ';
    AppendValue(out, value);
    out += '\n';
  }
}

std::string RowsToGaugeText(const std::string& name, const std::string& help,
                            const db::Rows& rows, const ColumnBinding& binding) {
  std::string samples;
  AppendGaugeSamples(samples, name, rows, binding);
  if (samples.empty()) return samples;
  return GaugeHeader(name, help) + samples;
}

}  // namespace seatwatch::metrics
