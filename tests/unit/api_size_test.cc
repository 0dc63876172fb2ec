// /api/invariants and /api/locks stay within a few MiB whatever the
// database returns, and what is served is still one valid JSON document
// that says it was cut.
#include <gtest/gtest.h>

#include "metrics/snapshot_builder.h"
#include "support/test_env.h"

namespace seatwatch::metrics {
namespace {

constexpr size_t kMiB = 1 << 20;

// python3's json module as the strict parser: exit status 0 if `json` is
// one valid document, and `check` (a Python expression over `d`) holds.
int PythonJson(const std::string& json, const std::string& check, std::string* output) {
  std::string dir = testing::MakeTempDir("seatwatch-json");
  testing::WriteFile(dir + "/doc.json", json);
  testing::WriteFile(dir + "/check.py",
                     "import json, sys\n"
                     "d = json.load(open(sys.argv[1], encoding='utf-8'))\n"
                     "ok = " + check + "\n"
                     "print('check:', ok)\n"
                     "sys.exit(0 if ok else 1)\n");
  return testing::RunCommand("python3 " + dir + "/check.py " + dir + "/doc.json", output);
}

// 300,000 violation rows with long labels (max_rows allows 10M): about
// 40 MB of JSON if written out whole.
PollState HugeInvariantState() {
  PollState state;
  state.database_up = true;
  CheckStatus check;
  check.name = "pack";
  check.has_run = true;
  check.success = true;
  check.invariants = {"first", "second", "third"};
  metrics::CheckOutput output;
  for (const auto& name : check.invariants) {
    metrics::InvariantResult result;
    result.name = name;
    result.check = "pack";
    if (name == "second") {
      for (int i = 0; i < 300000; ++i) {
        result.violations.push_back(
            {{{"event_id", std::to_string(i) + std::string(100, 'x')}}, 1});
      }
    }
    output.invariants.push_back(std::move(result));
  }
  check.output = std::make_shared<const metrics::CheckOutput>(std::move(output));
  state.checks.push_back(check);
  return state;
}

TEST(ApiSizeTest, InvariantsJsonIsCappedAndStillNamesEveryInvariant) {
  Snapshot snapshot = BuildSnapshot(HugeInvariantState());
  const std::string& json = snapshot.invariants_json;
  EXPECT_LE(json.size(), 4 * kMiB);
  EXPECT_GT(json.size(), 1 * kMiB) << "the cap keeps what fits";
  std::string output;
  EXPECT_EQ(PythonJson(json,
                       "d['truncated'] is True and "
                       "[i['name'] for i in d['invariants']] == ['first', 'second', 'third'] and "
                       "[i['status'] for i in d['invariants']] == ['ok', 'violated', 'ok'] and "
                       "d['invariants'][1]['violations_total'] == 300000 and "
                       "0 < len(d['invariants'][1]['violations']) < 300000 and "
                       "d['invariants'][1]['violations_omitted'] == "
                       "300000 - len(d['invariants'][1]['violations'])",
                       &output),
            0)
      << output;
}

TEST(ApiSizeTest, SmallInvariantsJsonIsNotMarked) {
  PollState state = HugeInvariantState();
  metrics::CheckOutput output = *state.checks[0].output;
  output.invariants[1].violations.resize(3);
  state.checks[0].output = std::make_shared<const metrics::CheckOutput>(output);
  std::string text;
  EXPECT_EQ(PythonJson(BuildSnapshot(state).invariants_json,
                       "'truncated' not in d and len(d['invariants'][1]['violations']) == 3 and "
                       "'violations_omitted' not in d['invariants'][1]",
                       &text),
            0)
      << text;
}

// A lock forest of 4,000 sessions whose query texts are 4 KiB each (with
// query_max_length = 0, up to track_activity_query_size).
std::string HugeLocksJson() {
  std::string json = "{\"timestamp_seconds\": 1.5, \"roots\": [";
  for (int i = 0; i < 4000; ++i) {
    if (i) json += ", ";
    json += "{\"pid\": " + std::to_string(i) + ", \"query\": \"" + std::string(4096, 'q') +
            " \\\"quoted\\\" \\\\ \\u00e9\", \"blocked_by\": [1, 2], \"waiters\": [{\"pid\": 9, "
            "\"waiters\": []}]}";
  }
  json += "], \"cycles\": [], \"unattributed\": []}";
  return json;
}

TEST(ApiSizeTest, LocksDocumentIsCappedToValidJson) {
  PollState state;
  CheckStatus check;
  check.name = "locks";
  check.has_run = true;
  check.success = true;
  metrics::CheckOutput output;
  output.documents["locks"] = HugeLocksJson();
  ASSERT_GT(output.documents["locks"].size(), 16 * kMiB);
  check.output = std::make_shared<const metrics::CheckOutput>(output);
  state.checks.push_back(check);
  Snapshot snapshot = BuildSnapshot(state);
  const std::string& json = snapshot.documents.at("locks");
  EXPECT_LE(json.size(), 4 * kMiB);
  EXPECT_GT(json.size(), 3 * kMiB);
  std::string text;
  EXPECT_EQ(PythonJson(json,
                       "d['truncated'] is True and d['timestamp_seconds'] == 1.5 and "
                       "0 < len(d['roots']) < 4000 and "
                       "all(r['query'].endswith(' \"quoted\" \\\\ \\u00e9') for r in d['roots'])",
                       &text),
            0)
      << text;
}

}  // namespace
}  // namespace seatwatch::metrics
