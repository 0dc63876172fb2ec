// The text exposition writer (one gauge family from query rows), fed
// arbitrary help text, label values and value text. Its output must pass a
// strict parser of the Prometheus text format 0.0.4 written here (every line
// a HELP or TYPE comment or `name{label="value",...} value`, only the escapes
// the format defines, a final newline), and must say exactly what it was
// given: the help, each label value and each number come back unchanged
// (text that is not UTF-8 comes back as valid UTF-8: Prometheus refuses a
// scrape that is not).
#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "db/failure.h"
#include "db/rows.h"
#include "metrics/gauge_text.h"
#include "metrics/row_mapping.h"

namespace {

using seatwatch::db::Rows;
using seatwatch::metrics::ColumnBinding;

// Names the broken rule before aborting, so that a finding explains itself.
#define Check(ok) \
  ((ok) ? (void)0 : (std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #ok), std::abort()))

struct Sample {
  std::string name;
  std::vector<std::pair<std::string, std::string>> labels;
  double value = 0;
};

struct Exposition {
  std::optional<std::string> help;
  bool typed = false;
  std::vector<Sample> samples;
};

// Well-formed UTF-8 (no overlong forms, surrogates or code points past
// U+10FFFF).
bool ValidUtf8(const std::string& text) {
  size_t i = 0;
  while (i < text.size()) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    int extra = c < 0x80 ? 0 : (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xE ? 2 : (c >> 3) == 0x1E ? 3 : -1;
    if (extra < 0 || i + extra >= text.size()) return false;
    if (extra == 0) {
      ++i;
      continue;
    }
    unsigned code = c & (0x3F >> extra);
    for (int k = 1; k <= extra; ++k) {
      unsigned char next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) return false;
      code = (code << 6) | (next & 0x3F);
    }
    static const unsigned kMin[] = {0, 0x80, 0x800, 0x10000};
    if (code < kMin[extra] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return false;
    i += extra + 1;
  }
  return true;
}

// What the writer may turn a text into: itself when it is UTF-8.
bool SameText(const std::string& written, const std::string& given) {
  Check(ValidUtf8(written));
  return ValidUtf8(given) ? written == given : true;
}

bool NameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':'; }
bool NameChar(char c) { return NameStart(c) || (c >= '0' && c <= '9'); }

// [a-zA-Z_:][a-zA-Z0-9_:]* (label names: no ':'), from `at`.
std::string ParseName(const std::string& line, size_t& at, bool label) {
  size_t start = at;
  while (at < line.size() && NameChar(line[at]) && !(label && line[at] == ':')) ++at;
  Check(at > start && NameStart(line[start]) && !(label && line[start] == ':'));
  return line.substr(start, at - start);
}

// Undoes the escapes of a HELP text (\\ and \n) or a label value (also \").
std::string Unescape(const std::string& text, bool label_value) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (label_value) Check(c != '"');
    if (c != '\\') {
      out += c;
      continue;
    }
    Check(i + 1 < text.size());
    char next = text[++i];
    if (next == 'n') {
      out += '\n';
    } else if (next == '\\' || (label_value && next == '"')) {
      out += next;
    } else {
      Check(false);  // no other escape exists
    }
  }
  return out;
}

double ParseValue(const std::string& text) {
  if (text == "Nan" || text == "NaN") return std::nan("");
  if (text == "+Inf") return INFINITY;
  if (text == "-Inf") return -INFINITY;
  Check(!text.empty() && text.find_first_not_of("0123456789+-.eE") == std::string::npos);
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  Check(end == text.c_str() + text.size());
  return value;
}

Sample ParseSample(const std::string& line) {
  Sample sample;
  size_t at = 0;
  sample.name = ParseName(line, at, false);
  if (at < line.size() && line[at] == '{') {
    ++at;
    while (true) {
      Check(at < line.size());
      if (line[at] == '}') break;
      std::string label = ParseName(line, at, true);
      Check(label.compare(0, 2, "__") != 0);
      Check(line.compare(at, 2, "=\"") == 0);
      at += 2;
      size_t start = at;
      while (at < line.size() && line[at] != '"') at += line[at] == '\\' ? 2 : 1;
      Check(at < line.size());
      sample.labels.emplace_back(label, Unescape(line.substr(start, at - start), true));
      ++at;  // the closing quote
      Check(at < line.size());
      if (line[at] == ',') ++at;
    }
    ++at;  // '}'
  }
  Check(at < line.size() && line[at] == ' ');
  sample.value = ParseValue(line.substr(at + 1));
  return sample;
}

Exposition Parse(const std::string& text) {
  Exposition out;
  Check(text.empty() || text.back() == '\n');
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.compare(0, 7, "# HELP ") == 0) {
      Check(!out.help && !out.typed && out.samples.empty());
      size_t at = 7;
      ParseName(line, at, false);
      Check(at < line.size() && line[at] == ' ');
      out.help = Unescape(line.substr(at + 1), false);
    } else if (line.compare(0, 7, "# TYPE ") == 0) {
      Check(!out.typed && out.samples.empty());
      size_t at = 7;
      ParseName(line, at, false);
      Check(line.substr(at) == " gauge");
      out.typed = true;
    } else {
      Check(out.typed);
      out.samples.push_back(ParseSample(line));
    }
  }
  return out;
}

bool SameNumber(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (a == b) return true;
  // The writer keeps 16 significant digits, as prometheus-cpp does.
  return std::fabs(a - b) <= 1e-15 * std::fmax(std::fabs(a), std::fabs(b));
}

std::string LabelName(FuzzedDataProvider& in) {
  static const char* const kNames[] = {"event_id", "kind", "a", "le", "state", "x_1"};
  return kNames[in.ConsumeIntegralInRange<size_t>(0, 5)];
}

std::optional<std::string> Cell(FuzzedDataProvider& in) {
  if (in.ConsumeIntegralInRange(0, 7) == 0) return std::nullopt;
  return in.ConsumeRandomLengthString(64);
}

std::optional<std::string> ValueCell(FuzzedDataProvider& in) {
  static const char* const kNumbers[] = {"0", "1", "-3", "1.5", "1e300", "-0", "NaN", "Infinity",
                                         "-Infinity", "t", "f", "123456789012345678901234567890",
                                         "0.1", "2.2250738585072014e-308"};
  switch (in.ConsumeIntegralInRange(0, 3)) {
    case 0:
      return std::nullopt;
    case 1:
      return in.ConsumeRandomLengthString(24);
    default:
      return std::string(kNumbers[in.ConsumeIntegralInRange<size_t>(0, 13)]);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  std::string name = "seatwatch_inventory";
  std::string help = in.ConsumeRandomLengthString(80);
  ColumnBinding binding;
  Rows rows;
  int labels = in.ConsumeIntegralInRange(0, 3);
  for (int i = 0; i < labels; ++i) {
    std::string label = LabelName(in);
    bool taken = false;
    for (const auto& have : binding.label_names) taken = taken || have == label;
    if (taken) continue;
    binding.label_names.push_back(label);
    binding.label_indexes.push_back(static_cast<int>(rows.columns.size()));
    rows.columns.push_back(label);
  }
  binding.value_index = static_cast<int>(rows.columns.size());
  rows.columns.push_back("value");
  int count = in.ConsumeIntegralInRange(0, 8);
  for (int r = 0; r < count; ++r) {
    std::vector<Rows::Cell> row;
    for (size_t i = 0; i < binding.label_names.size(); ++i) row.push_back(Cell(in));
    row.push_back(ValueCell(in));
    rows.values.push_back(std::move(row));
  }

  std::string text;
  try {
    text = seatwatch::metrics::RowsToGaugeText(name, help, rows, binding);
  } catch (const std::invalid_argument&) {
    return 0;  // a value that is not a number fails the check
  } catch (const seatwatch::db::DataError&) {
    return 0;  // so do a bad value and two rows of one series
  }
  Exposition parsed = Parse(text);

  // Exactly the rows with a value, in order, saying what they were given.
  std::vector<const std::vector<Rows::Cell>*> valued;
  for (const auto& row : rows.values) {
    if (row[binding.value_index]) valued.push_back(&row);
  }
  Check(parsed.samples.size() == valued.size());
  if (valued.empty()) {
    Check(text.empty());
    return 0;
  }
  Check(parsed.typed);
  if (!(help.empty() ? !parsed.help : parsed.help && SameText(*parsed.help, help))) {
    std::fprintf(stderr, "help changed:\n  given: %s\n  text:  %s", help.c_str(), text.c_str());
    std::abort();
  }
  for (size_t s = 0; s < valued.size(); ++s) {
    const Sample& sample = parsed.samples[s];
    const auto& row = *valued[s];
    Check(sample.name == name);
    Check(sample.labels.size() == binding.label_names.size());
    for (size_t i = 0; i < binding.label_names.size(); ++i) {
      Check(sample.labels[i].first == binding.label_names[i]);
      Check(SameText(sample.labels[i].second, row[binding.label_indexes[i]].value_or("")));
    }
    Check(SameNumber(sample.value, seatwatch::metrics::ParseNumber(*row[binding.value_index])));
  }
  return 0;
}
