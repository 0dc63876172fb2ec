// The [changes] table and the incremental keys of [[invariant]] and
// [[metric]]: the design's keys and defaults, read as strictly as every
// other table, each error naming file, line and key.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "config/config_error.h"
#include "config/describe.h"
#include "config/load.h"
#include "config/overrides.h"
#include "config/parse.h"
#include "support/test_env.h"
#include "unit/config_text.h"

namespace seatwatch::config {
namespace {

// An [[invariant]] with the incremental keys; `extra` goes inside the entry.
std::string Entry(const std::string& incremental, const std::string& extra = "") {
  return "[[invariant]]\nname = \"recon\"\nsql = \"r.sql\"\nlabels = [\"event_id\", \"kind\"]\n"
         "value = \"violations\"\n" +
         incremental + extra;
}

const std::string kIncremental =
    "key = \"event_id\"\n"
    "tables = { seats = \"event_id\", \"booking.tickets\" = \"event_id\" }\n"
    "scoped_sql = \"../queries/r.scoped.sql\"\n";

// LoadConfig's error for the file at `path`, or "(no error)".
std::string LoadErrorOf(const std::string& path) {
  try {
    LoadConfig(path);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

// The tunables of a [changes] table as one tuple: a mismatch prints both.
auto Tunables(const ChangesConfig& c) {
  return std::make_tuple(c.interval, c.full_pass_interval, c.statement_timeout, c.create_timeout,
                         c.max_changes, c.recheck_time_per_minute);
}

TEST(ChangesConfigTest, OffByDefaultWithTheDesignDefaults) {
  Config config = ParseText("");
  const ChangesConfig& changes = config.changes;
  EXPECT_FALSE(changes.enabled);
  EXPECT_EQ(changes.dsn, "");
  EXPECT_EQ(changes.publication, "seatwatch");
  EXPECT_EQ(changes.slot_prefix, "seatwatch");
  EXPECT_EQ(Tunables(changes), std::make_tuple(200ms, 1h, 5s, 5s, 100000, 1s));
  EXPECT_EQ(changes.where.line, 0);
  // An empty dsn means the monitor's own.
  EXPECT_EQ(config.ChangesDsn(), "postgresql:///booking");
  // A table without `enabled` stays off: the feed is only ever asked for.
  EXPECT_FALSE(ParseText("[changes]\ninterval = \"2s\"\n").changes.enabled);
}

TEST(ChangesConfigTest, EveryKey) {
  Config config = ParseText(Entry(kIncremental) + R"(
[changes]
enabled = true
dsn = "host=primary user=seatwatch_changes dbname=booking"
publication = "booking_feed"
slot_prefix = "sw_eu1"
interval = "500ms"
full_pass_interval = "30m"
statement_timeout = "2s"
create_timeout = "750ms"
max_changes = 5000
recheck_time_per_minute = "3s"
)");
  const ChangesConfig& changes = config.changes;
  EXPECT_TRUE(changes.enabled);
  EXPECT_EQ(changes.dsn, "host=primary user=seatwatch_changes dbname=booking");
  EXPECT_EQ(config.ChangesDsn(), changes.dsn);
  EXPECT_EQ(changes.publication, "booking_feed");
  EXPECT_EQ(changes.slot_prefix, "sw_eu1");
  EXPECT_EQ(Tunables(changes), std::make_tuple(500ms, 30min, 2s, 750ms, 5000, 3s));
  EXPECT_EQ(changes.where.line, 10);
}

TEST(ChangesConfigTest, UnknownKeysAndWrongTypesNameFileLineAndKey) {
  EXPECT_EQ(ErrorOf("[changes]\nslot_prefx = \"x\"\n"),
            "/etc/seatwatch/seatwatch.toml:2:1: changes.slot_prefx: unknown key");
  EXPECT_EQ(ErrorOf("[changes]\nenabled = \"yes\"\n"),
            "/etc/seatwatch/seatwatch.toml:2:11: changes.enabled: must be true or false");
  EXPECT_EQ(ErrorOf("[changes]\ndsn = 5\n"), "/etc/seatwatch/seatwatch.toml:2:7: changes.dsn: must be a string");
  EXPECT_EQ(ErrorOf("[changes]\npublication = [\"a\"]\n"),
            "/etc/seatwatch/seatwatch.toml:2:15: changes.publication: must be a string");
  EXPECT_EQ(ErrorOf("[changes]\ninterval = 1\n"),
            "/etc/seatwatch/seatwatch.toml:2:12: changes.interval: must be a duration string such as \"5s\" "
            "or \"250ms\"");
  EXPECT_EQ(ErrorOf("[changes]\nmax_changes = \"1000\"\n"),
            "/etc/seatwatch/seatwatch.toml:2:15: changes.max_changes: must be an integer");
  EXPECT_EQ(ErrorOf("changes = 1\n"), "/etc/seatwatch/seatwatch.toml:1:11: changes: must be a table");
}

TEST(ChangesConfigTest, DurationRanges) {
  EXPECT_EQ(ErrorOf("[changes]\ninterval = \"99ms\"\n"),
            "/etc/seatwatch/seatwatch.toml:2:12: changes.interval: must be at least 100ms and at most 24h "
            "(got 99ms)");
  EXPECT_EQ(ParseText("[changes]\ninterval = \"100ms\"\n").changes.interval, 100ms);
  EXPECT_EQ(ErrorOf("[changes]\ninterval = \"2s\"\nfull_pass_interval = \"1s\"\n"),
            "/etc/seatwatch/seatwatch.toml:3:22: changes.full_pass_interval: must be at least "
            "changes.interval (2s; got 1s)");
  // Against the default full_pass_interval (1h), the error is where the interval is.
  EXPECT_EQ(ErrorOf("[changes]\ninterval = \"2h\"\n"),
            "/etc/seatwatch/seatwatch.toml:2:12: changes.full_pass_interval: must be at least "
            "changes.interval (2h; got 1h)");
  Config equal = ParseText("[changes]\ninterval = \"5s\"\nfull_pass_interval = \"5s\"\n");
  EXPECT_EQ(equal.changes.full_pass_interval, 5s);
  EXPECT_EQ(ErrorOf("[changes]\nstatement_timeout = \"0ms\"\n"),
            "/etc/seatwatch/seatwatch.toml:2:21: changes.statement_timeout: must be at least 1ms and at "
            "most 2147483647ms (got 0ms)");
  // At most all of every minute: a budget past that would hold nothing back.
  EXPECT_EQ(ErrorOf("[changes]\nrecheck_time_per_minute = \"61s\"\n"),
            "/etc/seatwatch/seatwatch.toml:2:27: changes.recheck_time_per_minute: must be at least "
            "1ms and at most 1m (got 61s)");
  EXPECT_EQ(ErrorOf("[changes]\nrecheck_time_per_minute = \"0s\"\n"),
            "/etc/seatwatch/seatwatch.toml:2:27: changes.recheck_time_per_minute: must be at least "
            "1ms and at most 1m (got 0ms)");
  EXPECT_EQ(ParseText("[changes]\nrecheck_time_per_minute = \"60s\"\n").changes.recheck_time_per_minute,
            60s);
  EXPECT_EQ(ErrorOf("[changes]\ncreate_timeout = \"0s\"\n"),
            "/etc/seatwatch/seatwatch.toml:2:18: changes.create_timeout: must be at least 1ms and at most "
            "2147483647ms (got 0ms)");
}

TEST(ChangesConfigTest, MaxChangesRange) {
  EXPECT_EQ(ErrorOf("[changes]\nmax_changes = 0\n"),
            "/etc/seatwatch/seatwatch.toml:2:15: changes.max_changes: must be between 1 and 10000000 (got 0)");
  EXPECT_EQ(ErrorOf("[changes]\nmax_changes = 10000001\n"),
            "/etc/seatwatch/seatwatch.toml:2:15: changes.max_changes: must be between 1 and 10000000 (got "
            "10000001)");
  EXPECT_EQ(ParseText("[changes]\nmax_changes = 1\n").changes.max_changes, 1);
  EXPECT_EQ(ParseText("[changes]\nmax_changes = 10000000\n").changes.max_changes, 10000000);
}

TEST(ChangesConfigTest, PublicationAndSlotPrefixAreShortIdentifiers) {
  EXPECT_EQ(ErrorOf("[changes]\npublication = \"Seat-watch\"\n"),
            "/etc/seatwatch/seatwatch.toml:2:15: changes.publication: \"Seat-watch\" must match "
            "[a-z_][a-z0-9_]*");
  EXPECT_EQ(ErrorOf("[changes]\nslot_prefix = \"\"\n"),
            "/etc/seatwatch/seatwatch.toml:2:15: changes.slot_prefix: \"\" must match [a-z_][a-z0-9_]*");
  EXPECT_EQ(ErrorOf("[changes]\nslot_prefix = \"a;drop\"\n"),
            "/etc/seatwatch/seatwatch.toml:2:15: changes.slot_prefix: \"a;drop\" must match [a-z_][a-z0-9_]*");
  const std::string forty(40, 'p');
  EXPECT_EQ(ParseText("[changes]\nslot_prefix = \"" + forty + "\"\n").changes.slot_prefix, forty);
  EXPECT_EQ(ParseText("[changes]\npublication = \"" + forty + "\"\n").changes.publication, forty);
  EXPECT_EQ(ErrorOf("[changes]\nslot_prefix = \"" + forty + "x\"\n"),
            "/etc/seatwatch/seatwatch.toml:2:15: changes.slot_prefix: is 41 characters long; at most 40");
  EXPECT_EQ(ErrorOf("[changes]\npublication = \"" + forty + "x\"\n"),
            "/etc/seatwatch/seatwatch.toml:2:15: changes.publication: is 41 characters long; at most 40");
}

TEST(ChangesConfigTest, DsnMustParseAndNeverShowsItsPassword) {
  std::string error = ErrorOf("[changes]\ndsn = \"host='unterminated password=hunter2\"\n");
  EXPECT_EQ(error.rfind("/etc/seatwatch/seatwatch.toml:2:7: changes.dsn: ", 0), 0u) << error;
  EXPECT_EQ(error.find("hunter2"), std::string::npos) << error;
  EXPECT_EQ(ErrorOf("[changes]\ndsn = \"" + std::string(8193, 'a') + "\"\n"),
            "/etc/seatwatch/seatwatch.toml:2:7: changes.dsn: is 8193 characters long; at most 8192");
}

TEST(ChangesConfigTest, EnvironmentOverridesTheDsn) {
  Config config = ParseText("[changes]\ndsn = \"host=file\"\n");
  ApplyEnvironment(config, Env({{"SEATWATCH_CHANGES_DSN", "host=env user=repl"}}));
  EXPECT_EQ(config.changes.dsn, "host=env user=repl");
  EXPECT_EQ(config.ChangesDsn(), "host=env user=repl");
  // SEATWATCH_DSN moves the monitor only; the feed keeps its own DSN.
  ApplyEnvironment(config, Env({{"SEATWATCH_DSN", "host=monitor"}}));
  EXPECT_EQ(config.database.dsn, "host=monitor");
  EXPECT_EQ(config.ChangesDsn(), "host=env user=repl");
  // Empty is unset, as for SEATWATCH_DSN.
  Config plain = ParseText("");
  ApplyEnvironment(plain, Env({{"SEATWATCH_CHANGES_DSN", ""}}));
  EXPECT_EQ(plain.changes.dsn, "");
  try {
    ApplyEnvironment(plain, Env({{"SEATWATCH_CHANGES_DSN", "host='unterminated password=hunter2"}}));
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    std::string message = e.what();
    EXPECT_EQ(message.rfind("SEATWATCH_CHANGES_DSN: changes.dsn: ", 0), 0u) << message;
    EXPECT_EQ(message.find("hunter2"), std::string::npos) << message;
  }
}

TEST(ChangesConfigTest, EnabledWithoutAnIncrementalEntryIsAnError) {
  EXPECT_EQ(ErrorOf("[[invariant]]\nname = \"x\"\nsql = \"x.sql\"\nvalue = \"v\"\n\n[changes]\nenabled = true\n"),
            "/etc/seatwatch/seatwatch.toml:6:1: changes.enabled: is true, but no [[invariant]] or "
            "[[metric]] is incremental (none sets key, tables and scoped_sql), so nothing would read the "
            "change feed");
  EXPECT_TRUE(ParseText(Entry(kIncremental) + "[changes]\nenabled = true\n").changes.enabled);
  // An incremental entry with the feed off: full passes, no error.
  Config off = ParseText(Entry(kIncremental));
  EXPECT_FALSE(off.changes.enabled);
  EXPECT_EQ(off.queries[0].key, "event_id");
}

TEST(ChangesConfigTest, EntryKeysOfAnInvariant) {
  Config config = ParseText(Entry(kIncremental, "expiry_column = \"next_expiry_unix\"\n"));
  const QueryConfig& entry = config.queries.at(0);
  EXPECT_EQ(entry.key, "event_id");
  std::map<std::string, std::string> tables = {{"seats", "event_id"}, {"booking.tickets", "event_id"}};
  EXPECT_EQ(entry.tables, tables);
  EXPECT_EQ(entry.scoped_sql_path, "/etc/queries/r.scoped.sql");
  EXPECT_EQ(entry.expiry_column, "next_expiry_unix");
  EXPECT_EQ(entry.KeyLocation("key").line, 6);
  EXPECT_EQ(entry.KeyLocation("tables.booking.tickets").line, 7);
  // Read only when loaded: incremental() is about the text that will run.
  EXPECT_FALSE(entry.incremental());
  // Without the keys, nothing is incremental.
  const QueryConfig plain = ParseText(Entry("")).queries.at(0);
  EXPECT_TRUE(plain.key.empty());
  EXPECT_TRUE(plain.tables.empty());
  EXPECT_TRUE(plain.scoped_sql_path.empty());
  EXPECT_FALSE(plain.incremental());
}

TEST(ChangesConfigTest, EntryKeysOfAMetric) {
  Config config = ParseText(
      "[[metric]]\nname = \"inventory\"\nsql = \"r.sql\"\nlabels = [\"event_id\", \"kind\"]\nvalue = \"count\"\n" +
          kIncremental + "expiry_column = \"next_expiry_unix\"\n");
  const QueryConfig& entry = config.queries.at(0);
  EXPECT_EQ(entry.key, "event_id");
  EXPECT_EQ(entry.tables.size(), 2u);
  EXPECT_EQ(entry.scoped_sql_path, "/etc/queries/r.scoped.sql");
  EXPECT_EQ(entry.expiry_column, "next_expiry_unix");
}

TEST(ChangesConfigTest, KeyTablesAndScopedSqlComeTogether) {
  const std::pair<std::string, std::string> kIncomplete[] = {
      {Entry("key = \"event_id\"\n"),
       "/etc/seatwatch/seatwatch.toml:1:1: invariant.tables: is required with key: incremental mode "
       "needs key, tables and scoped_sql"},
      {Entry("key = \"event_id\"\ntables = { seats = \"event_id\" }\n"),
       "/etc/seatwatch/seatwatch.toml:1:1: invariant.scoped_sql: is required with key and tables: "
       "incremental mode needs key, tables and scoped_sql"},
      {Entry("tables = { seats = \"event_id\" }\nscoped_sql = \"s.sql\"\n"),
       "/etc/seatwatch/seatwatch.toml:1:1: invariant.key: is required with tables and scoped_sql: "
       "incremental mode needs key, tables and scoped_sql"},
      {Entry("scoped_sql = \"s.sql\"\n"),
       "/etc/seatwatch/seatwatch.toml:1:1: invariant.key: is required with scoped_sql: incremental "
       "mode needs key, tables and scoped_sql"},
      {Entry("expiry_column = \"next_expiry_unix\"\n"),
       "/etc/seatwatch/seatwatch.toml:6:17: invariant.expiry_column: needs key, tables and scoped_sql: "
       "it is read only in incremental mode"},
  };
  for (const auto& [toml, expected] : kIncomplete) EXPECT_EQ(ErrorOf(toml), expected);
}

TEST(ChangesConfigTest, KeyIsOneOfTheLabels) {
  EXPECT_EQ(ErrorOf(Entry("key = \"seat\"\ntables = { seats = \"event_id\" }\nscoped_sql = \"s.sql\"\n")),
            "/etc/seatwatch/seatwatch.toml:6:7: invariant.key: \"seat\" is not one of this entry's labels: "
            "the key must be a label, so that each row belongs to one key");
  EXPECT_EQ(ErrorOf(Entry("key = 3\ntables = { seats = \"event_id\" }\nscoped_sql = \"s.sql\"\n")),
            "/etc/seatwatch/seatwatch.toml:6:7: invariant.key: must be a string");
}

TEST(ChangesConfigTest, TablesMapTableNamesToKeyColumns) {
  auto with_tables = [](const std::string& tables) {
    return ErrorOf(Entry("key = \"event_id\"\ntables = " + tables + "\nscoped_sql = \"s.sql\"\n"));
  };
  EXPECT_EQ(with_tables("[\"seats\"]"),
            "/etc/seatwatch/seatwatch.toml:7:10: invariant.tables: must be a table of table = \"key "
            "column\", e.g. { seats = \"event_id\" }");
  EXPECT_EQ(with_tables("{}"), "/etc/seatwatch/seatwatch.toml:7:10: invariant.tables: must name at least one table");
  EXPECT_EQ(with_tables("{ Seats = \"event_id\" }"),
            "/etc/seatwatch/seatwatch.toml:7:12: invariant.tables: \"Seats\" must be a table name such as "
            "\"seats\" or \"public.seats\"");
  EXPECT_EQ(with_tables("{ \"a.b.c\" = \"event_id\" }"),
            "/etc/seatwatch/seatwatch.toml:7:12: invariant.tables: \"a.b.c\" must be a table name such as "
            "\"seats\" or \"public.seats\"");
  EXPECT_EQ(with_tables("{ seats = 1 }"),
            "/etc/seatwatch/seatwatch.toml:7:12: invariant.tables.seats: must be a string: the table's key "
            "column");
  EXPECT_EQ(with_tables("{ seats = \"Event Id\" }"),
            "/etc/seatwatch/seatwatch.toml:7:12: invariant.tables.seats: \"Event Id\" must match "
            "[a-z_][a-z0-9_]*");
  EXPECT_EQ(with_tables("{ seats = \"" + std::string(64, 'c') + "\" }"),
            "/etc/seatwatch/seatwatch.toml:7:12: invariant.tables.seats: is 64 characters long; at most 63");
  EXPECT_EQ(with_tables("{ seats = \"event_id\", \"public.seats\" = \"event_id\" }"),
            "/etc/seatwatch/seatwatch.toml:7:32: invariant.tables.public.seats: overlaps \"seats\", which "
            "already matches that table in every schema");
  // TOML reads an unquoted dotted key as a table in a table.
  EXPECT_EQ(with_tables("{ public.seats = \"event_id\" }"),
            "/etc/seatwatch/seatwatch.toml:7:12: invariant.tables.public: is a table: quote a schema-qualified "
            "name, e.g. \"public.seats\" = \"event_id\"");
}

TEST(ChangesConfigTest, ScopedSqlIsAPath) {
  EXPECT_EQ(ErrorOf(Entry("key = \"event_id\"\ntables = { seats = \"event_id\" }\nscoped_sql = \"\"\n")),
            "/etc/seatwatch/seatwatch.toml:8:14: invariant.scoped_sql: must not be empty");
  EXPECT_EQ(ErrorOf(Entry("key = \"event_id\"\ntables = { seats = \"event_id\" }\nscoped_sql = \"a\\u0001\"\n")),
            "/etc/seatwatch/seatwatch.toml:8:14: invariant.scoped_sql: must not contain control characters");
  EXPECT_EQ(ErrorOf(Entry("key = \"event_id\"\ntables = { seats = \"event_id\" }\nscoped_sql = 1\n")),
            "/etc/seatwatch/seatwatch.toml:8:14: invariant.scoped_sql: must be a string");
  Config absolute =
      ParseText(Entry("key = \"event_id\"\ntables = { seats = \"event_id\" }\nscoped_sql = \"/q/s.sql\"\n"));
  EXPECT_EQ(absolute.queries[0].scoped_sql_path, "/q/s.sql");
}

TEST(ChangesConfigTest, ExpiryColumnIsAnotherColumn) {
  EXPECT_EQ(ErrorOf(Entry(kIncremental, "expiry_column = \"Next\"\n")),
            "/etc/seatwatch/seatwatch.toml:9:17: invariant.expiry_column: \"Next\" must match [a-z_][a-z0-9_]*");
  EXPECT_EQ(ErrorOf(Entry(kIncremental, "expiry_column = \"kind\"\n")),
            "/etc/seatwatch/seatwatch.toml:9:17: invariant.expiry_column: must not also be a label, the value "
            "column or the invariant column");
  EXPECT_EQ(ErrorOf(Entry(kIncremental, "expiry_column = \"violations\"\n")),
            "/etc/seatwatch/seatwatch.toml:9:17: invariant.expiry_column: must not also be a label, the value "
            "column or the invariant column");
  EXPECT_EQ(ErrorOf(Entry(kIncremental, "invariant_column = \"inv\"\ninvariants = [\"a\"]\nexpiry_column = \"inv\"\n")),
            "/etc/seatwatch/seatwatch.toml:11:17: invariant.expiry_column: must not also be a label, the value "
            "column or the invariant column");
  EXPECT_EQ(ErrorOf(Entry(kIncremental, "expiry_colum = \"x\"\n")),
            "/etc/seatwatch/seatwatch.toml:9:1: invariant.expiry_colum: unknown key");
}

TEST(ChangesConfigTest, ScopedSqlIsReadTrimmedWhenLoaded) {
  std::string dir = testing::MakeTempDir("seatwatch-changes-config");
  testing::WriteFile(dir + "/r.sql", "SELECT 1 AS event_id, 'k' AS kind, 0 AS violations;\n");
  testing::WriteFile(dir + "/r.scoped.sql", "SELECT 1 AS event_id WHERE 1 = ANY ($1::int[]);;\n\n");
  std::string toml = Entry("key = \"event_id\"\ntables = { seats = \"event_id\" }\nscoped_sql = \"r.scoped.sql\"\n");
  testing::WriteFile(dir + "/seatwatch.toml", toml);
  Config config = LoadConfig(dir + "/seatwatch.toml");
  const QueryConfig& entry = config.queries.at(0);
  EXPECT_EQ(entry.scoped_sql, "SELECT 1 AS event_id WHERE 1 = ANY ($1::int[])");
  EXPECT_TRUE(entry.incremental());

  testing::WriteFile(dir + "/seatwatch.toml",
                     Entry("key = \"event_id\"\ntables = { seats = \"event_id\" }\nscoped_sql = \"missing.sql\"\n"));
  EXPECT_EQ(LoadErrorOf(dir + "/seatwatch.toml"),
            dir + "/seatwatch.toml:8:14: invariant.scoped_sql: cannot read " + dir +
                "/missing.sql: No such file or directory");
  testing::WriteFile(dir + "/empty.sql", " ;\n");
  testing::WriteFile(dir + "/seatwatch.toml",
                     Entry("key = \"event_id\"\ntables = { seats = \"event_id\" }\nscoped_sql = \"empty.sql\"\n"));
  EXPECT_EQ(LoadErrorOf(dir + "/seatwatch.toml"),
            dir + "/seatwatch.toml:8:14: invariant.scoped_sql: " + dir + "/empty.sql holds no SQL");
}

TEST(ChangesConfigTest, MetricNamesOfTheFeedAreReserved) {
  for (const char* name : {"changes_up", "changes_lag_bytes", "dirty_keys", "full_passes_total", "check_mode"}) {
    std::string error = ErrorOf(std::string("[[metric]]\nname = \"") + name + "\"\nsql = \"m.sql\"\nvalue = \"v\"\n");
    EXPECT_EQ(error, std::string("/etc/seatwatch/seatwatch.toml:2:8: metric.name: \"seatwatch_") + name +
                         "\" would clash with a metric seatwatch exports itself");
  }
}

TEST(ChangesConfigTest, CheckConfigSaysWhichEntriesAreIncremental) {
  Config off = ParseText(Entry(kIncremental, "expiry_column = \"next_expiry_unix\"\n"));
  std::vector<std::string> lines = DescribeIncremental(off);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "changes: enabled = false: incremental entries run full passes at their interval");
  EXPECT_EQ(lines[1],
            "invariant recon: incremental (key event_id; tables booking.tickets.event_id, seats.event_id; "
            "scoped_sql /etc/queries/r.scoped.sql; expiry_column next_expiry_unix)");

  Config on = ParseText(Entry(kIncremental) +
                              "[changes]\nenabled = true\ndsn = \"host=db user=repl password=hunter2\"\n");
  lines = DescribeIncremental(on);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0],
            "changes: enabled, dsn host=db user=repl password=****, publication seatwatch, interval 200ms, "
            "rechecks at most 1s a minute, full pass every 1h");
  EXPECT_EQ(lines[1],
            "invariant recon: incremental (key event_id; tables booking.tickets.event_id, seats.event_id; "
            "scoped_sql /etc/queries/r.scoped.sql)");

  EXPECT_TRUE(DescribeIncremental(ParseText(Entry(""))).empty());
}

}  // namespace
}  // namespace seatwatch::config
