#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <prometheus/metric_family.h>

namespace seatwatch::metrics {

using Labels = std::vector<prometheus::ClientMetric::Label>;

// Small constructors for hand-built families; every check uses these so the
// types and help texts are set in one way. The help is stored escaped for
// the text format (prometheus-cpp writes it as it is), and label values are
// made valid UTF-8.
prometheus::MetricFamily GaugeFamily(std::string name, std::string help);
prometheus::MetricFamily CounterFamily(std::string name, std::string help);
prometheus::MetricFamily HistogramFamily(std::string name, std::string help);

void AddGauge(prometheus::MetricFamily& family, Labels labels, double value);
void AddCounter(prometheus::MetricFamily& family, Labels labels, double value);

// One counter sample per value of an enum-like label: counts[i] under
// label=values[i], for counts kept in an array indexed like the values.
template <std::size_t N>
void AddCountersByLabel(prometheus::MetricFamily& family, const std::string& label,
                        const std::array<const char*, N>& values,
                        const std::array<std::uint64_t, N>& counts) {
  for (std::size_t i = 0; i < N; ++i) {
    AddCounter(family, {{label, values[i]}}, static_cast<double>(counts[i]));
  }
}

// A family with one unlabelled gauge sample.
prometheus::MetricFamily SingleGauge(std::string name, std::string help, double value);

// A cumulative histogram kept by its owner (bucket bounds fixed at creation).
// Not thread-safe.
class HistogramData {
 public:
  explicit HistogramData(std::vector<double> bounds);
  void Observe(double value);
  void AddTo(prometheus::MetricFamily& family, Labels labels = {}) const;
  std::uint64_t count() const { return count_; }
  double sum() const { return sum_; }

 private:
  std::vector<double> bounds_;
  std::vector<std::uint64_t> counts_;  // per bucket, not cumulative
  std::uint64_t count_ = 0;
  double sum_ = 0;
};

}  // namespace seatwatch::metrics
