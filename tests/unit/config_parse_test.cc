#include "config/parse.h"
#include "unit/config_text.h"

#include <gtest/gtest.h>

#include "config/config_error.h"

namespace seatwatch::config {
namespace {

TEST(ConfigParseTest, DefaultsWhenEmpty) {
  Config config = ParseText("");
  EXPECT_EQ(config.database.dsn, "postgresql:///booking");
  EXPECT_EQ(config.database.application_name, "seatwatch");
  EXPECT_EQ(config.database.statement_timeout, 5s);
  EXPECT_EQ(config.database.lock_timeout, 100ms);
  EXPECT_EQ(config.database.connect_timeout, 5s);
  EXPECT_EQ(config.http.listen, "127.0.0.1:9646");
  EXPECT_EQ(config.poll.interval, 10s);
  EXPECT_TRUE(config.locks.enabled);
  EXPECT_FALSE(config.holds.enabled);
  EXPECT_FALSE(config.cleanup.enabled);
  EXPECT_TRUE(config.queries.empty());
}

TEST(ConfigParseTest, FullExample) {
  Config config = ParseText(R"(
[database]
dsn = "postgresql:///shop"
application_name = "sw"
statement_timeout = "2s"
lock_timeout = "50ms"

[http]
listen = "0.0.0.0:9000"

[poll]
interval = "15s"

[[invariant]]
name = "sold_seat_without_ticket"
sql = "../queries/a.sql"
help = "Seats sold without a ticket"
labels = ["event_id"]
value = "violations"
params = [4, "x", true]
interval = "30s"
detail_sql = "detail.sql"

[[invariant]]
name = "booking_reconciliation"
sql = "/abs/rec.sql"
invariant_column = "invariant"
invariants = ["a_one", "b_two"]
labels = ["event_id"]
value = "violations"
detail_sql = { a_one = "d/a.sql" }

[[metric]]
name = "event_inventory"
sql = "inv.sql"
labels = ["event_id", "kind"]
value = "count"
)");
  EXPECT_EQ(config.database.dsn, "postgresql:///shop");
  EXPECT_EQ(config.database.statement_timeout, 2s);
  EXPECT_EQ(config.http.listen, "0.0.0.0:9000");
  ASSERT_EQ(config.queries.size(), 3u);
  const auto& single = config.queries[0];
  EXPECT_EQ(single.sql_path, "/etc/queries/a.sql");
  EXPECT_EQ(single.invariants, std::vector<std::string>{"sold_seat_without_ticket"});
  EXPECT_EQ(single.params, (std::vector<std::string>{"4", "x", "true"}));
  EXPECT_EQ(config.IntervalOf(single), 30s);
  EXPECT_EQ(single.detail_sql_path.at("sold_seat_without_ticket"), "/etc/seatwatch/detail.sql");
  EXPECT_EQ(single.KeyLocation("labels").line, 18);
  const auto& multi = config.queries[1];
  EXPECT_EQ(multi.invariants, (std::vector<std::string>{"a_one", "b_two"}));
  EXPECT_EQ(multi.detail_sql_path.at("a_one"), "/etc/seatwatch/d/a.sql");
  EXPECT_EQ(config.IntervalOf(multi), 15s);
  EXPECT_EQ(config.queries[2].kind, QueryConfig::Kind::kMetric);
}

struct BadCase {
  const char* toml;
  const char* expected;  // the whole "file:line:col: key: problem" prefix that matters
};

class ConfigErrorTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(ConfigErrorTest, NamesFileLineAndKey) {
  std::string error = ErrorOf(GetParam().toml);
  EXPECT_NE(error.find(GetParam().expected), std::string::npos)
      << "got: " << error << "\nwanted: " << GetParam().expected;
}

INSTANTIATE_TEST_SUITE_P(
    BadConfigs, ConfigErrorTest,
    ::testing::Values(
        BadCase{"[database]\nstatment_timeout = \"5s\"\n",
                "seatwatch.toml:2:1: database.statment_timeout: unknown key"},
        BadCase{"bogus = 1\n", "seatwatch.toml:1:1: bogus: unknown key"},
        BadCase{"[database]\nstatement_timeout = 5\n",
                "seatwatch.toml:2:21: database.statement_timeout: must be a duration string"},
        BadCase{"[database]\nlock_timeout = \"5\"\n",
                "seatwatch.toml:2:16: database.lock_timeout: duration \"5\" needs a unit"},
        BadCase{"[database]\ndsn = 3\n", "seatwatch.toml:2:7: database.dsn: must be a string"},
        BadCase{"[http]\nlisten = \"nope\"\n",
                "seatwatch.toml:2:10: http.listen: must be HOST:PORT"},
        BadCase{"[poll]\ninterval = \"10ms\"\n",
                "seatwatch.toml:2:12: poll.interval: must be at least 100ms"},
        BadCase{"[[invariant]]\nname = \"x\"\nvalue = \"v\"\n",
                "seatwatch.toml:1:1: invariant.sql: is required"},
        BadCase{"[[invariant]]\nname = \"Bad-Name\"\nsql = \"a.sql\"\nvalue = \"v\"\n",
                "seatwatch.toml:2:8: invariant.name: \"Bad-Name\" must match"},
        BadCase{"[[invariant]]\nname = \"x\"\nsql = \"a.sql\"\nvalue = \"v\"\nlables = []\n",
                "seatwatch.toml:5:1: invariant.lables: unknown key"},
        BadCase{"[[invariant]]\nname = \"x\"\nsql = \"a.sql\"\nvalue = \"v\"\nlabels = [\"a-b\"]\n",
                "seatwatch.toml:5:10: invariant.labels: \"a-b\" is not a valid Prometheus label"},
        BadCase{"[[invariant]]\nname = \"x\"\nsql = \"a.sql\"\nvalue = \"v\"\nlabels = [\"invariant\"]\n",
                "invariant.labels: \"invariant\" is reserved"},
        BadCase{"[[invariant]]\nname = \"x\"\nsql = \"a.sql\"\nvalue = \"v\"\n"
                "[[invariant]]\nname = \"x\"\nsql = \"b.sql\"\nvalue = \"v\"\n",
                "seatwatch.toml:6:8: invariant.name: duplicate name \"x\""},
        BadCase{"[[invariant]]\nname = \"x\"\nsql = \"a.sql\"\nvalue = \"v\"\ninvariants = [\"a\"]\n",
                "seatwatch.toml:5:14: invariant.invariants: needs invariant_column"},
        BadCase{"[[invariant]]\nname = \"x\"\nsql = \"a.sql\"\nvalue = \"v\"\ninvariant_column = \"i\"\n",
                "seatwatch.toml:1:1: invariant.invariants: is required with invariant_column"},
        BadCase{"[[invariant]]\nname = \"x\"\nsql = \"a.sql\"\nvalue = \"v\"\ninvariant_column = \"i\"\n"
                "invariants = [\"a\"]\ndetail_sql = { b = \"b.sql\" }\n",
                "invariant.detail_sql.b: is not one of this entry's invariants"},
        BadCase{"[[invariant]]\nname = \"a\"\nsql = \"a.sql\"\nvalue = \"v\"\n"
                "[[invariant]]\nname = \"b\"\nsql = \"b.sql\"\nvalue = \"v\"\ninvariant_column = \"i\"\n"
                "invariants = [\"a\"]\n",
                "invariant \"a\" is defined twice"},
        BadCase{"[[metric]]\nname = \"up\"\nsql = \"a.sql\"\nvalue = \"v\"\n",
                "metric.name: \"seatwatch_up\" would clash"},
        BadCase{"[[metric]]\nname = \"m\"\nsql = \"a.sql\"\nvalue = \"v\"\ninvariants = [\"a\"]\n",
                "metric.invariants: is only valid in [[invariant]]"},
        BadCase{"[[metric]]\nname = \"locks\"\nsql = \"a.sql\"\nvalue = \"v\"\n",
                "\"locks\" is the name of a built-in check"},
        BadCase{"[invariant]\nname = \"x\"\n", "invariant: must be written as [[invariant]]"},
        BadCase{"[locks]\nresolve_rows = [\"seats; drop\"]\n", "locks.resolve_rows: \"seats; drop\""},
        BadCase{"[cleanup]\nenabled = true\n", "cleanup.sql: is required when cleanup is enabled"},
        BadCase{"[cleanup]\nbatch_size = 0\n", "cleanup.batch_size: must be between 1 and"},
        BadCase{"log_level = \"loud\"\n", "log_level: must be one of"},
        BadCase{"[database\n", "seatwatch.toml:1:"}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return "Case" + std::to_string(info.index); });

}  // namespace
}  // namespace seatwatch::config
