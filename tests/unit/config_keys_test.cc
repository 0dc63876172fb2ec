// The parser against the key table (config/keys.h): every bound is where the
// table says, every default is what Config{} holds, and the keys the parser
// accepts are exactly the table's.
#include <gtest/gtest.h>

#include <toml++/toml.h>

#include <map>
#include <set>
#include <string>

#include "config/keys.h"
#include "unit/config_text.h"
#include "util/duration.h"

namespace seatwatch::config {
namespace {

// The keys an entry requires, but `except`.
std::string EntryKeys(const std::string& except) {
  std::string out;
  for (const char* line : {"name = \"x\"\n", "sql = \"a.sql\"\n", "value = \"v\"\n"}) {
    if (std::string(line).rfind(except + " ", 0) != 0) out += line;
  }
  return out;
}

std::string SectionOf(const std::string& key) {
  size_t dot = key.rfind('.');
  return dot == std::string::npos ? "" : key.substr(0, dot);
}

std::string LeafOf(const std::string& key) { return key.substr(key.rfind('.') + 1); }

// A declared entry of each kind ([[invariant]] with `kind`), as lines
// "key = value"; a sub-table's keys are "rows.table = ...".
const std::map<std::string, std::vector<std::string>> kDeclared = {
    {"check", {"key = \"a\"", "rows.table = \"t\"", "condition = \"a > 0\""}},
    {"exists",
     {"key = \"a\"", "rows.table = \"t\"", "rows.columns = [\"a\"]", "in.table = \"u\"",
      "in.columns = [\"a\"]"}},
    {"unique", {"key = \"a\"", "rows.table = \"t\"", "rows.columns = [\"a\"]"}},
    {"at_most",
     {"key = \"a\"", "rows.table = \"t\"", "rows.columns = [\"a\"]", "limit.table = \"u\"",
      "limit.columns = [\"a\"]", "limit.column = \"n\""}},
    {"counter",
     {"key = \"a\"", "table = \"t\"", "columns = [\"a\"]", "column = \"n\"",
      "rows.table = \"u\"", "rows.columns = [\"a\"]"}},
};

// The kind whose entry holds `key` (dotted under "invariant."); "" for a key
// of hand-written entries.
std::string KindHolding(const std::string& key) {
  if (key == "kind" || key == "check" || key == "condition") return "check";
  if (key.rfind("rows.", 0) == 0) return "at_most";
  if (key.rfind("in.", 0) == 0) return "exists";
  if (key.rfind("limit.", 0) == 0) return "at_most";
  if (key == "table" || key == "columns" || key == "column") return "counter";
  return "";
}

// A declared entry of `kind` without the key `except`, written so that
// `except` can follow it as the file's last line: in its own sub-table when
// it belongs to one.
std::string DeclaredEntry(const std::string& kind, const std::string& except) {
  std::string out = "[[invariant]]\nname = \"x\"\n";
  if (except != "kind") out += "kind = \"" + kind + "\"\n";
  std::map<std::string, std::string> tables;
  for (const std::string& line : kDeclared.at(kind)) {
    std::string key = line.substr(0, line.find(' '));
    if (key == except) continue;
    size_t dot = key.find('.');
    if (dot == std::string::npos) {
      out += line + "\n";
    } else {
      tables[key.substr(0, dot)] += line.substr(dot + 1) + "\n";
    }
  }
  // Sub-tables inline, but the one `except` belongs to: written last, as
  // [invariant.<table>], so that `except` is its last line.
  std::string open = except.find('.') == std::string::npos ? "" : except.substr(0, except.find('.'));
  for (const auto& [table, lines] : tables) {
    if (table == open) continue;
    std::string inline_table;
    for (size_t start = 0; start < lines.size();) {
      size_t end = lines.find('\n', start);
      inline_table += (inline_table.empty() ? "" : ", ") + lines.substr(start, end - start);
      start = end + 1;
    }
    out += table + " = { " + inline_table + " }\n";
  }
  if (!open.empty()) out += "[invariant." + open + "]\n" + tables[open];
  return out;
}

// Keys only a [[metric]] with `kind` takes.
bool DeclaredMetricKey(const std::string& key) {
  return key == "kind" || key == "check" || key == "label" || key.rfind("counts", 0) == 0;
}

// A [[metric]] with kind riding on no check, without `except` (dotted
// under "metric."), so that `except` can follow it as the file's last line.
std::string DeclaredMetric(const std::string& except) {
  std::string out = "[[metric]]\nname = \"m\"\nkey = \"a\"\n";
  if (except != "kind") out += "kind = \"count\"\n";
  if (except != "label") out += "label = \"k\"\n";
  if (except.rfind("counts.", 0) == 0) {
    std::string leaf = except.substr(7);
    out += "[[metric.counts]]\n";
    if (leaf != "name") out += "name = \"n\"\n";
    if (leaf != "table") out += "table = \"t\"\n";
  } else if (except != "counts") {
    out += "counts = [{ name = \"n\", table = \"t\" }]\n";
  }
  return out;
}

// What a section needs written so that its other keys (or `except`) can be
// read.
std::string SectionHeader(const std::string& section, const std::string& except = "") {
  if (section.empty()) return "";
  if (section == "metric.counts") return DeclaredMetric("counts." + except);
  if (section == "metric" && DeclaredMetricKey(except)) return DeclaredMetric(except);
  if (section.rfind("invariant.", 0) == 0) {
    std::string key = section.substr(10) + "." + except;
    return DeclaredEntry(KindHolding(key), key);
  }
  if (section == "invariant" && !KindHolding(except).empty()) {
    return DeclaredEntry(KindHolding(except), except);
  }
  if (section == "invariant" || section == "metric") {
    return "[[" + section + "]]\n" + EntryKeys(except);
  }
  if (section == "holds") return "[holds]\nsql = \"h.sql\"\n";
  return "[" + section + "]\n";
}

// Keys whose accepted range depends on another key of their section.
const std::map<std::string, std::string> kCompanions = {
    {"changes.interval", "full_pass_interval = \"24h\"\n"},
    {"changes.full_pass_interval", "interval = \"100ms\"\n"},
    {"http.tls_min_version", "tls_cert_file = \"s.crt\"\ntls_key_file = \"s.key\"\n"},
};

// A file that sets `spec` to `value` (as TOML), and where the value is.
struct Written {
  std::string toml;
  int line = 0;
  int column = 0;
};

Written WithValue(const KeySpec& spec, const std::string& value) {
  Written out;
  out.toml = SectionHeader(SectionOf(spec.name), LeafOf(spec.name));
  // Each kind takes its own fields: the entry is that kind's.
  if (spec.name == "invariant.kind" && value.size() > 2 && kDeclared.count(value.substr(1, value.size() - 2))) {
    out.toml = DeclaredEntry(value.substr(1, value.size() - 2), "kind");
  }
  auto companion = kCompanions.find(spec.name);
  if (companion != kCompanions.end()) out.toml += companion->second;
  out.line = 1 + static_cast<int>(std::count(out.toml.begin(), out.toml.end(), '\n'));
  out.column = static_cast<int>(LeafOf(spec.name).size() + 4);
  out.toml += LeafOf(spec.name) + " = " + value + "\n";
  return out;
}

std::string Value(const KeySpec& spec, long long number) {
  if (spec.type == KeyType::kInteger) return std::to_string(number);
  return "\"" + util::FormatDuration(Millis(number)) + "\"";
}

void ExpectAccepted(const KeySpec& spec, long long number) {
  Written written = WithValue(spec, Value(spec, number));
  EXPECT_EQ(ErrorOf(written.toml), "(no error)") << written.toml;
}

void ExpectRefused(const KeySpec& spec, long long number) {
  Written written = WithValue(spec, Value(spec, number));
  std::string prefix = std::string(kPath) + ":" + std::to_string(written.line) + ":" +
                       std::to_string(written.column) + ": " + spec.name + ": ";
  std::string error = ErrorOf(written.toml);
  EXPECT_EQ(error.rfind(prefix, 0), 0u) << "wanted " << prefix << "\ngot " << error;
}

TEST(ConfigKeysTest, EveryBoundIsWhereTheTableSays) {
  int bounded = 0;
  for (const KeySpec& spec : AllKeys()) {
    if (!spec.HasBounds()) continue;
    SCOPED_TRACE(spec.name);
    ++bounded;
    ExpectAccepted(spec, spec.min);
    ExpectAccepted(spec, spec.max);
    ExpectRefused(spec, spec.max + 1);
    // A negative duration is not a duration at all; an integer's is tested.
    if (spec.type == KeyType::kInteger || spec.min > 0) ExpectRefused(spec, spec.min - 1);
  }
  EXPECT_GE(bounded, 20);
}

TEST(ConfigKeysTest, EveryStringLimitIsWhereTheTableSays) {
  for (const KeySpec& spec : AllKeys()) {
    if (spec.max_length == 0) continue;
    SCOPED_TRACE(spec.name);
    // A host name of letters is a listen address once it has a port, and a
    // URL once it has a scheme.
    const std::string port = spec.name == "http.listen" ? ":9646" : "";
    const std::string scheme = spec.name == "invariant.runbook_url" ? "https://" : "";
    auto text = [&](size_t length) {
      return "\"" + scheme + std::string(length - scheme.size() - port.size(), 'a') + port + "\"";
    };
    Written inside = WithValue(spec, text(spec.max_length));
    EXPECT_EQ(ErrorOf(inside.toml), "(no error)");
    Written outside = WithValue(spec, text(spec.max_length + 1));
    EXPECT_EQ(ErrorOf(outside.toml).rfind(std::string(kPath) + ":" +
                                              std::to_string(outside.line) + ":" +
                                              std::to_string(outside.column) + ": " + spec.name +
                                              ": is " + std::to_string(spec.max_length + 1) +
                                              " characters long; at most " +
                                              std::to_string(spec.max_length),
                                          0),
              0u)
        << ErrorOf(outside.toml);
  }
}

TEST(ConfigKeysTest, EveryChoiceIsAcceptedAndNothingElse) {
  for (const KeySpec& spec : AllKeys()) {
    if (spec.allowed.empty()) continue;
    SCOPED_TRACE(spec.name);
    for (const std::string& choice : spec.allowed) {
      EXPECT_EQ(ErrorOf(WithValue(spec, "\"" + choice + "\"").toml), "(no error)");
    }
    Written other = WithValue(spec, "\"other\"");
    EXPECT_EQ(ErrorOf(other.toml).rfind(std::string(kPath) + ":" + std::to_string(other.line) +
                                            ":" + std::to_string(other.column) + ": " +
                                            spec.name + ": must be ",
                                        0),
              0u);
  }
}

TEST(ConfigKeysTest, EveryDefaultIsWhatConfigHolds) {
  int defaults = 0;
  for (const KeySpec& spec : AllKeys()) {
    if (!spec.default_text) continue;
    SCOPED_TRACE(spec.name);
    ASSERT_NE(spec.value_of, nullptr);
    ++defaults;
    const std::string section = SectionOf(spec.name);
    EXPECT_EQ(spec.value_of(ParseText(SectionHeader(section))), spec.default_text);
    bool in_entry = section == "invariant" || section == "metric";
    if (in_entry || section == "holds") continue;
    EXPECT_EQ(spec.value_of(Config{}), spec.default_text);
    EXPECT_EQ(spec.value_of(ParseText("")), spec.default_text);
  }
  EXPECT_GE(defaults, 40);
  // [holds] is off until its table is written; written, it is on.
  EXPECT_EQ(KeyNamed("holds.enabled").value_of(Config{}), "false");
}

// Every key of the table, each with a value the parser takes.
const char* kEveryKey = R"toml(
log_level = "debug"
allow_no_checks = true

[database]
dsn = "postgresql:///shop"
application_name = "sw"
connect_timeout = "3s"
statement_timeout = "2s"
lock_timeout = "50ms"
reconnect_max_backoff = "5s"

[checks]
dsn = "host=standby"

[http]
listen = "127.0.0.1:9000"
tls_cert_file = "s.crt"
tls_key_file = "s.key"
tls_client_ca_file = "ca.crt"
tls_min_version = "1.3"
auth_exempt_probes = false

[http.basic_auth]
users = { prometheus = "$2y$04$23cokb6d.c4P5W9JRd2xeOGgm0ofo8iJI5gN4bRRLmtJkuZWn0fT6" }

[poll]
interval = "15s"

[[invariant]]
name = "recon"
sql = "r.sql"
value = "violations"
labels = ["event_id"]
help = "Reconciliation"
params = [1, "x"]
interval = "30s"
max_rows = 10
invariant_column = "invariant"
invariants = ["a_one", "b_two"]
detail_sql = { a_one = "d/a.sql" }
invariant_help = { a_one = "A one" }
runbook_url = "https://example.com/runbook.md"
key = "event_id"
tables = { seats = "event_id" }
scoped_sql = "r.scoped.sql"
expiry_column = "next_expiry_unix"

[[invariant]]
check = "shop"
name = "negative_stock"
kind = "check"
key = "product_id"
help = "Stock below zero"
rows = { table = "product", where = "active" }
condition = "stock >= 0"

[[invariant]]
check = "shop"
name = "line_over_stock"
kind = "at_most"
key = ["product_id"]
labels = ["product_id"]
rows = { table = "order_line", columns = ["product_id"], sum = "quantity", expires = "reserved_until", where = "reserved_until > now()" }
limit = { table = "product", columns = ["product_id"], column = "stock" }

[[invariant]]
check = "shop"
name = "line_without_product"
kind = "exists"
key = "product_id"
rows = { table = "order_line", columns = ["product_id"] }
in = { table = "product", columns = ["product_id"], where = "active" }

[[invariant]]
check = "shop"
name = "counted_lines"
kind = "counter"
key = "product_id"
table = "product"
columns = ["product_id"]
column = "line_count"
rows = { table = "order_line", columns = ["product_id"] }

[[metric]]
check = "shop"
name = "product_lines"
kind = "count"
key = "product_id"
labels = ["product_id"]
label = "state"
counts = [
  { name = "reserved", table = "order_line", columns = ["product_id"], where = "reserved_until > now()", expires = "reserved_until" },
  { name = "quantity", table = "order_line", sum = "quantity" },
]

[[metric]]
name = "inventory"
sql = "i.sql"
value = "count"
labels = ["event_id"]
help = "Inventory"
params = [true]
interval = "30s"
max_rows = 10
key = "event_id"
tables = { seats = "event_id" }
scoped_sql = "i.scoped.sql"
expiry_column = "next_expiry_unix"

[locks]
enabled = true
interval = "1s"
statement_timeout = "500ms"
log_threshold = "0ms"
resolve_rows = ["seats"]
show_query = "raw"
query_max_length = 100

[holds]
enabled = true
sql = "h.sql"
interval = "5s"

[cleanup]
dry_run = true
dry_run_sql = "c.dry.sql"
statement_timeout = "400ms"
lock_timeout = "20ms"
sql = "c.sql"
batch_pause = "10ms"
max_batches = 3
batch_size = 10
interval = "2s"
enabled = true

[changes]
enabled = true
dsn = "host=primary"
publication = "pub"
slot_prefix = "slot"
interval = "2s"
full_pass_interval = "2h"
statement_timeout = "3s"
create_timeout = "4s"
max_changes = 1000
recheck_time_per_minute = "5s"
)toml";

// The dotted names of the keys written in `table`; the user's own names
// (users, tables, detail_sql's invariants) are values, not keys.
void CollectKeys(const toml::table& table, const std::string& prefix, std::set<std::string>& out) {
  for (auto&& [key, node] : table) {
    std::string leaf(key.str());
    std::string name = prefix.empty() ? leaf : prefix + "." + leaf;
    out.insert(name);
    if (const toml::array* array = node.as_array(); array && array->is_array_of_tables()) {
      for (const toml::node& item : *array) CollectKeys(*item.as_table(), name, out);
    } else if (node.is_table() && (KeyNamed(name).type == KeyType::kSection ||
                                   KeyNamed(name).type == KeyType::kNumberOrSection)) {
      CollectKeys(*node.as_table(), name, out);
    }
  }
}

TEST(ConfigKeysTest, TheParserTakesExactlyTheTablesKeys) {
  EXPECT_EQ(ErrorOf(kEveryKey), "(no error)");
  std::set<std::string> written;
  CollectKeys(toml::parse(kEveryKey), "", written);
  std::set<std::string> listed;
  for (const KeySpec& spec : AllKeys()) {
    EXPECT_TRUE(listed.insert(spec.name).second) << spec.name << " is listed twice";
  }
  EXPECT_EQ(written, listed);
  // The parser asks the table for every key it reads: one it does not list
  // would fail every parse of its section, not pass unseen.
  EXPECT_THROW(KeyNamed("database.not_a_key"), std::logic_error);
}

}  // namespace
}  // namespace seatwatch::config
