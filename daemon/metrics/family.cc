#include "metrics/family.h"

#include <limits>

#include "metrics/exposition_escape.h"
#include "util/utf8.h"

namespace seatwatch::metrics {

namespace {

prometheus::MetricFamily Family(std::string name, std::string help, prometheus::MetricType type) {
  prometheus::MetricFamily family;
  family.name = std::move(name);
  // prometheus-cpp writes the help as it is.
  family.help = EscapedHelp(help);
  family.type = type;
  return family;
}

// prometheus-cpp escapes backslash, quote and newline in label values, but
// passes any other byte, and one that is not UTF-8 fails the whole scrape.
Labels Valid(Labels labels) {
  for (auto& label : labels) {
    if (!util::IsValidUtf8(label.value)) label.value = util::ValidUtf8(label.value);
  }
  return labels;
}

}  // namespace

prometheus::MetricFamily GaugeFamily(std::string name, std::string help) {
  return Family(std::move(name), std::move(help), prometheus::MetricType::Gauge);
}

prometheus::MetricFamily CounterFamily(std::string name, std::string help) {
  return Family(std::move(name), std::move(help), prometheus::MetricType::Counter);
}

prometheus::MetricFamily HistogramFamily(std::string name, std::string help) {
  return Family(std::move(name), std::move(help), prometheus::MetricType::Histogram);
}

void AddGauge(prometheus::MetricFamily& family, Labels labels, double value) {
  prometheus::ClientMetric sample;
  sample.label = Valid(std::move(labels));
  sample.gauge.value = value;
  family.metric.push_back(std::move(sample));
}

void AddCounter(prometheus::MetricFamily& family, Labels labels, double value) {
  prometheus::ClientMetric sample;
  sample.label = Valid(std::move(labels));
  sample.counter.value = value;
  family.metric.push_back(std::move(sample));
}

prometheus::MetricFamily SingleGauge(std::string name, std::string help, double value) {
  auto family = GaugeFamily(std::move(name), std::move(help));
  AddGauge(family, {}, value);
  return family;
}

HistogramData::HistogramData(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void HistogramData::Observe(double value) {
  size_t i = 0;
  while (i < bounds_.size() && value > bounds_[i]) ++i;
  ++counts_[i];
  ++count_;
  sum_ += value;
}

void HistogramData::AddTo(prometheus::MetricFamily& family, Labels labels) const {
  prometheus::ClientMetric sample;
  sample.label = Valid(std::move(labels));
  std::uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += counts_[i];
    sample.histogram.bucket.push_back({cumulative, bounds_[i]});
  }
  sample.histogram.bucket.push_back({count_, std::numeric_limits<double>::infinity()});
  sample.histogram.sample_count = count_;
  sample.histogram.sample_sum = sum_;
  family.metric.push_back(std::move(sample));
}

}  // namespace seatwatch::metrics
