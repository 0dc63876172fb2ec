// What a hostile (or merely careless) query result does to the exposition,
// against a real database: too many rows, label sets that collide once NULL
// and '' are both empty, values that are not numbers or not counts, huge
// detail rows, and label and help text that break the text format. Each
// fails only its own check, under its own reason, and exports nothing stale.
#include <gtest/gtest.h>

#include "checks/registry.h"
#include "metrics/snapshot.h"
#include "metrics/snapshot_builder.h"
#include "poll/poller.h"
#include "support/check_status.h"
#include "support/daemon_process.h"
#include "support/scratch_db.h"
#include "support/test_config.h"
#include "support/test_env.h"

namespace seatwatch {
namespace {

using testing::FindCheck;
using testing::ScratchDatabase;

// One [[metric]] or [[invariant]] entry over the SQL in `sql`, written to a
// file of its own.
std::string Entry(const std::string& dir, const std::string& kind, const std::string& name,
                  const std::string& sql, const std::string& keys) {
  testing::WriteFile(dir + "/" + name + ".sql", sql + "\n");
  return "[[" + kind + "]]\nname = \"" + name + "\"\nsql = \"" + dir + "/" + name + ".sql\"\n" +
         keys + "\n";
}

metrics::PollState PollOnce(const std::string& toml, const std::string& dsn) {
  config::Config config = testing::ConfigFromToml("[locks]\nenabled = false\n" + toml, dsn);
  metrics::SnapshotStore store;
  poll::Poller poller(config, checks::BuildChecks(config), store, "test");
  return poller.RunAllOnce();
}

// A result one row over max_rows fails that check with too_many_rows, the
// database sends no more than max_rows + 1 rows, and the other checks keep
// reporting.
TEST(HostileDataTest, MaxRowsPlusOneFailsWithTooManyRows) {
  ScratchDatabase db("sw_hostile_rows");
  db.Exec("SELECT pg_stat_statements_reset()");
  std::string dir = testing::MakeTempDir("seatwatch-sql");
  std::string toml =
      Entry(dir, "metric", "wide",
            "SELECT g AS wide_id, 1 AS n FROM generate_series(1, 1000000) AS g WHERE g > 0",
            "labels = [\"wide_id\"]\nvalue = \"n\"\nmax_rows = 1000") +
      Entry(dir, "metric", "exact",
            "SELECT g AS exact_id, 1 AS n FROM generate_series(1, 1000) AS g",
            "labels = [\"exact_id\"]\nvalue = \"n\"\nmax_rows = 1000") +
      Entry(dir, "invariant", "many_keys",
            "SELECT g AS key, 0 AS violations FROM generate_series(1, 1001) AS g",
            "labels = [\"key\"]\nvalue = \"violations\"\nmax_rows = 1000") +
      Entry(dir, "invariant", "fine", "SELECT 1 AS key, 0 AS violations",
            "labels = [\"key\"]\nvalue = \"violations\"");
  metrics::PollState state = PollOnce(toml, db.dsn());
  ASSERT_TRUE(state.database_up);

  const auto& wide = FindCheck(state, "wide");
  EXPECT_FALSE(wide.success);
  EXPECT_EQ(wide.errors.at("too_many_rows"), 1u);
  EXPECT_EQ(wide.errors.at("sql"), 0u);
  EXPECT_EQ(wide.rendered, nullptr);
  EXPECT_NE(wide.last_error.find("max_rows = 1000"), std::string::npos) << wide.last_error;
  const auto& many = FindCheck(state, "many_keys");
  EXPECT_FALSE(many.success);
  EXPECT_EQ(many.errors.at("too_many_rows"), 1u);

  const auto& exact = FindCheck(state, "exact");
  ASSERT_TRUE(exact.success) << exact.last_error;
  const auto& fine = FindCheck(state, "fine");
  ASSERT_TRUE(fine.success) << fine.last_error;

  std::string text = metrics::BuildSnapshot(state).MetricsText();
  EXPECT_EQ(text.find("seatwatch_wide{"), std::string::npos);
  EXPECT_EQ(testing::Sample(text, "seatwatch_exact{exact_id=\"1000\"}"), 1);
  EXPECT_EQ(testing::Sample(text, "seatwatch_invariant_ok{invariant=\"fine\"}"), 1);
  EXPECT_EQ(text.find("seatwatch_invariant_ok{invariant=\"many_keys\"}"), std::string::npos);
  EXPECT_EQ(testing::Sample(
                text, "seatwatch_check_errors_total{check=\"wide\",reason=\"too_many_rows\"}"),
            1);
  EXPECT_EQ(testing::Sample(
                text, "seatwatch_check_errors_total{check=\"fine\",reason=\"too_many_rows\"}"),
            0);

  // The server stopped after max_rows + 1 of the million rows. (Its WHERE
  // sets it apart: pg_stat_statements ignores aliases, and would count the
  // other generate_series queries as the same statement.)
  EXPECT_EQ(db.Scalar("SELECT sum(rows) FROM pg_stat_statements WHERE query LIKE "
                      "'%wide_id%' AND query LIKE '%seatwatch_rows%'"),
            "1001")
      << db.Scalar("SELECT string_agg(query || ' rows=' || rows, E'\\n') FROM pg_stat_statements");
}

// NULL and '' are both an empty label value: two rows, one series.
TEST(HostileDataTest, NullAndEmptyLabelCollisionFailsWithDuplicateSeries) {
  ScratchDatabase db("sw_hostile_dupes", ScratchDatabase::Schema::kNone);
  db.Exec("CREATE TABLE probe (k text, n int); INSERT INTO probe VALUES ('a', 1), ('', 2)");
  std::string dir = testing::MakeTempDir("seatwatch-sql");
  std::string toml =
      Entry(dir, "metric", "probe", "SELECT k, n FROM probe", "labels = [\"k\"]\nvalue = \"n\"") +
      Entry(dir, "invariant", "probe_inv", "SELECT k, n AS violations FROM probe",
            "labels = [\"k\"]\nvalue = \"violations\"") +
      Entry(dir, "metric", "other", "SELECT 7 AS n", "value = \"n\"");
  config::Config config = testing::ConfigFromToml("[locks]\nenabled = false\n" + toml, db.dsn());
  metrics::SnapshotStore store;
  poll::Poller poller(config, checks::BuildChecks(config), store, "test");
  metrics::PollState state = poller.RunAllOnce();
  ASSERT_TRUE(FindCheck(state, "probe").success) << FindCheck(state, "probe").last_error;
  ASSERT_TRUE(FindCheck(state, "probe_inv").success) << FindCheck(state, "probe_inv").last_error;

  db.Exec("INSERT INTO probe VALUES (NULL, 3)");
  state = poller.RunAllOnce();
  for (const char* name : {"probe", "probe_inv"}) {
    const auto& check = FindCheck(state, name);
    EXPECT_FALSE(check.success) << name;
    EXPECT_EQ(check.errors.at("duplicate_series"), 1u) << name;
    EXPECT_EQ(check.errors.at("sql"), 0u) << name;
    EXPECT_EQ(check.rendered, nullptr) << name;
    EXPECT_NE(check.last_error.find("k=\"\""), std::string::npos) << check.last_error;
  }
  ASSERT_TRUE(FindCheck(state, "other").success);
  std::string text = metrics::BuildSnapshot(state).MetricsText();
  EXPECT_EQ(text.find("seatwatch_probe{"), std::string::npos) << "no stale series";
  // No verdict (seatwatch_invariant_info still names the invariant).
  EXPECT_EQ(text.find("seatwatch_invariant_ok{invariant=\"probe_inv\""), std::string::npos)
      << "no stale verdict";
  EXPECT_EQ(text.find("seatwatch_invariant_violations{invariant=\"probe_inv\""), std::string::npos)
      << "no stale verdict";
  EXPECT_EQ(testing::Sample(text, "seatwatch_other"), 7);
}

// Text that strtod would take, and counts that are not counts.
TEST(HostileDataTest, ValuesThatAreNotNumbersOrCountsFailWithBadValue) {
  ScratchDatabase db("sw_hostile_values", ScratchDatabase::Schema::kNone);
  std::string dir = testing::MakeTempDir("seatwatch-sql");
  std::string toml =
      Entry(dir, "metric", "hex", "SELECT '0x1A'::text AS n", "value = \"n\"") +
      Entry(dir, "metric", "tiny", "SELECT '1e-400'::text AS n", "value = \"n\"") +
      Entry(dir, "metric", "spaced", "SELECT ' 12 '::text AS n", "value = \"n\"") +
      Entry(dir, "metric", "real_numbers",
            "SELECT k, n FROM (VALUES ('float', 1e-300::float8::text), ('numeric', "
            "123.4500::numeric::text), ('nan', 'NaN'::float8::text), ('inf', "
            "'-Infinity'::float8::text), ('bool', true::text), ('bool_out', 'f')) v(k, n)",
            "labels = [\"k\"]\nvalue = \"n\"") +
      Entry(dir, "invariant", "negative", "SELECT -1 AS violations", "value = \"violations\"") +
      Entry(dir, "invariant", "not_a_number", "SELECT 'NaN'::float8 AS violations",
            "value = \"violations\"");
  metrics::PollState state = PollOnce(toml, db.dsn());
  for (const char* name : {"hex", "tiny", "spaced", "negative", "not_a_number"}) {
    const auto& check = FindCheck(state, name);
    EXPECT_FALSE(check.success) << name;
    EXPECT_EQ(check.errors.at("bad_value"), 1u) << name << ": " << check.last_error;
    EXPECT_EQ(check.output, nullptr) << name;
  }
  const auto& real = FindCheck(state, "real_numbers");
  ASSERT_TRUE(real.success) << real.last_error;
  EXPECT_EQ(testing::Sample(real.rendered->Text(), "seatwatch_real_numbers{k=\"numeric\"}"), 123.45);
  EXPECT_EQ(testing::Sample(real.rendered->Text(), "seatwatch_real_numbers{k=\"bool\"}"), 1);
  EXPECT_EQ(testing::Sample(real.rendered->Text(), "seatwatch_real_numbers{k=\"bool_out\"}"), 0);
  std::string text = metrics::BuildSnapshot(state).MetricsText();
  EXPECT_EQ(text.find("seatwatch_invariant_ok{invariant=\"negative\""), std::string::npos);
  EXPECT_EQ(text.find("seatwatch_invariant_violations{invariant=\"negative\""), std::string::npos);
}

// A detail query returning megabytes: each value is cut to 1 KiB and the
// rows to 64 KiB in all, and the cut is marked.
TEST(HostileDataTest, DetailRowsAreCapped) {
  ScratchDatabase db("sw_hostile_detail", ScratchDatabase::Schema::kNone);
  std::string dir = testing::MakeTempDir("seatwatch-sql");
  testing::WriteFile(dir + "/detail.sql",
                     "SELECT g AS n, repeat('x', 100000) AS a, repeat('y', 100000) AS b, "
                     "repeat('\xc3\xa9', 50000) AS c, repeat('z', 5000) AS d, "
                     "repeat('w', 5000) AS e FROM generate_series(1, 20) g\n");
  std::string toml = Entry(dir, "invariant", "bulky", "SELECT 1 AS key, 3 AS violations",
                           "labels = [\"key\"]\nvalue = \"violations\"\ndetail_sql = \"" + dir +
                               "/detail.sql\"");
  metrics::PollState state = PollOnce(toml, db.dsn());
  const auto& check = FindCheck(state, "bulky");
  ASSERT_TRUE(check.success) << check.last_error;
  const auto& detail = check.output->invariants.at(0).detail;
  ASSERT_TRUE(detail.has_value());
  EXPECT_TRUE(detail->error.empty()) << detail->error;
  ASSERT_FALSE(detail->rows.empty());
  EXPECT_LT(detail->rows.size(), 20u) << "rows beyond the total cap are dropped";
  size_t total = 0;
  for (const auto& row : detail->rows) {
    for (const auto& cell : row) {
      ASSERT_TRUE(cell.has_value());
      EXPECT_LE(cell->size(), 1024u + 64u);
      total += cell->size();
    }
    EXPECT_EQ(row[1]->rfind("xxxx", 0), 0u);
    EXPECT_NE(row[1]->find("...[truncated, 100000 bytes]"), std::string::npos) << *row[1];
    // Cut on a character boundary: é is two bytes, never split.
    std::string kept = row[3]->substr(0, row[3]->find("..."));
    EXPECT_EQ(kept.size() % 2, 0u) << "a character was split";
    EXPECT_EQ(kept.find("\xc3\xc3"), std::string::npos);
  }
  EXPECT_LE(total, 64u * 1024u);
  std::string json = metrics::BuildSnapshot(state).invariants_json;
  EXPECT_LT(json.size(), 80u * 1024u);
  EXPECT_NE(json.find("\"truncated\":true"), std::string::npos) << json.substr(0, 300);
}

// A help over several lines and label values with every character that
// needs care: the whole exposition still passes promtool.
TEST(HostileDataTest, MultiLineHelpAndHostileLabelsPassPromtool) {
  ScratchDatabase db("sw_hostile_text", ScratchDatabase::Schema::kNone);
  std::string dir = testing::MakeTempDir("seatwatch-sql");
  std::string toml =
      Entry(dir, "metric", "hostile",
            "SELECT k, row_number() OVER () AS n FROM (VALUES (E'line\\nbreak'), ('quo\"te'), "
            "(E'back\\\\slash'), (chr(27) || '[31mred' || chr(7)), (chr(1) || chr(13) || "
            "chr(9)), ('caf\xc3\xa9')) v(k)",
            "labels = [\"k\"]\nvalue = \"n\"\nhelp = \"\"\"Hostile labels,\nover two lines "
            "with a \\\\ backslash.\"\"\"") +
      Entry(dir, "invariant", "multi_line_help", "SELECT 0 AS violations",
            "value = \"violations\"\nhelp = \"\"\"First line.\nSecond line.\"\"\"");
  metrics::PollState state = PollOnce(toml, db.dsn());
  ASSERT_TRUE(FindCheck(state, "hostile").success) << FindCheck(state, "hostile").last_error;
  std::string text = metrics::BuildSnapshot(state).MetricsText();
  EXPECT_NE(text.find("# HELP seatwatch_hostile Hostile labels,\\nover two lines with a \\\\ "
                      "backslash. (from the last poll).\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("seatwatch_hostile{k=\"line\\nbreak\"} 1\n"), std::string::npos) << text;
  std::string file = dir + "/metrics.txt";
  testing::WriteFile(file, text);
  std::string output;
  EXPECT_EQ(testing::RunCommand("promtool check metrics < " + file, &output), 0)
      << output << text;
}

}  // namespace
}  // namespace seatwatch
