// [[metric]] entries with `kind`: counts parsed, ridden on their check's
// pass (one statement, the check's scans), lowered into a metric entry of
// their own; every refusal names the file, line and key.
#include <gtest/gtest.h>

#include <string>

#include "config_text.h"

namespace seatwatch::config {
namespace {

constexpr const char* kBooking = R"toml(
[[invariant]]
check = "booking"
name = "sold_seat_without_ticket"
kind = "exists"
key = "event_id"
rows = { table = "seats", columns = ["event_id", "seat"], where = "status = 'sold'" }
in = { table = "tickets", columns = ["event_id", "seat"] }
interval = "20s"

[[metric]]
check = "booking"
name = "event_inventory"
help = "Seats by state and tickets per event"
kind = "count"
key = "event_id"
label = "kind"
counts = [
  { name = "seats_sold", table = "seats", where = "status = 'sold'" },
  { name = "seats_held", table = "seats", where = "status = 'held' AND until > now()", expires = "until" },
  { name = "tickets", table = "tickets" },
  { name = "paid", table = "payments", columns = ["event"], sum = "amount" },
]
)toml";

const QueryConfig& Named(const Config& config, const std::string& name) {
  for (const auto& query : config.queries) {
    if (query.name == name) return query;
  }
  throw std::runtime_error("no entry " + name);
}

TEST(DeclaredMetricConfigTest, AMetricRidesOnItsChecksPass) {
  Config config = ParseText(kBooking);
  ASSERT_EQ(config.queries.size(), 2u);
  const QueryConfig& check = Named(config, "booking");
  const QueryConfig& metric = Named(config, "event_inventory");
  EXPECT_EQ(metric.kind, QueryConfig::Kind::kMetric);
  EXPECT_TRUE(metric.compiled);
  EXPECT_EQ(metric.pass_of, "booking");
  // One statement for both: the query cache runs it once per poll.
  EXPECT_EQ(metric.sql, check.sql);
  EXPECT_EQ(metric.scoped_sql, check.scoped_sql);
  EXPECT_EQ(metric.labels, (std::vector<std::string>{"event_id", "kind"}));
  EXPECT_EQ(metric.value, "seatwatch_value_1");
  EXPECT_EQ(metric.help, "Seats by state and tickets per event");
  // The check's cadence, and its incremental map with the metric's tables.
  EXPECT_EQ(metric.interval, check.interval);
  EXPECT_EQ(metric.key, "event_id");
  EXPECT_EQ(metric.tables, (std::map<std::string, std::string>{
                               {"payments", "event"}, {"seats", "event_id"}, {"tickets", "event_id"}}));
  EXPECT_EQ(check.tables, metric.tables);
  EXPECT_EQ(metric.expiry_column, "seatwatch_next_expiry");
  EXPECT_EQ(metric.KeyLocation("name").line, 13);
}

TEST(DeclaredMetricConfigTest, CountsAreColumnsOfTheScansTheCheckMakesAnyway) {
  Config config = ParseText(kBooking);
  const std::string& sql = Named(config, "booking").sql;
  // One scan each of seats, tickets and payments, no more.
  EXPECT_EQ(sql.find("seatwatch_scan_4"), std::string::npos) << sql;
  EXPECT_NE(sql.find("FROM seats AS t\n  GROUP BY t.event_id"), std::string::npos) << sql;
  EXPECT_NE(sql.find("FROM payments AS t\n  GROUP BY t.event"), std::string::npos) << sql;
  // seats_sold counts the rows of the balance's sold side: no column of its own.
  EXPECT_NE(sql.find("('seats_sold', coalesce(s1.rows_1, 0)::float8)"), std::string::npos) << sql;
  EXPECT_NE(sql.find("sum((\namount\n)) AS count_1"), std::string::npos) << sql;
  // The invariant rows carry NULL in the metric's columns.
  EXPECT_NE(sql.find("NULL::text AS kind, NULL::float8 AS seatwatch_value_1"), std::string::npos);
  EXPECT_NE(sql.find("t.tally AS kind, t.value AS seatwatch_value_1"), std::string::npos);
}

TEST(DeclaredMetricConfigTest, AMetricOfItsOwnMakesItsOwnPass) {
  Config config = ParseText(R"(
[[metric]]
name = "stock"
kind = "count"
key = ["shop", "product"]
label = "state"
[[metric.counts]]
name = "reserved"
table = "order_line"
where = "reserved"
)");
  ASSERT_EQ(config.queries.size(), 1u);
  const QueryConfig& metric = config.queries[0];
  EXPECT_EQ(metric.pass_of, "stock");
  EXPECT_EQ(metric.labels, (std::vector<std::string>{"shop", "product", "state"}));
  EXPECT_FALSE(metric.incremental());
  EXPECT_NE(metric.not_incremental.find("2 columns"), std::string::npos);
  EXPECT_NE(metric.sql.find("GROUP BY t.shop, t.product"), std::string::npos) << metric.sql;
}

struct Refusal {
  const char* toml;
  const char* error;
};

class DeclaredMetricRefusalTest : public ::testing::TestWithParam<Refusal> {};

TEST_P(DeclaredMetricRefusalTest, NamesFileLineAndKey) {
  EXPECT_EQ(ErrorOf(GetParam().toml), GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Hostile, DeclaredMetricRefusalTest,
    ::testing::Values(
        Refusal{"\n[[metric]]\nname = \"m\"\nkind = \"sum\"\nkey = \"id\"\n",
                "/etc/seatwatch/seatwatch.toml:4:8: metric.kind: must be \"count\""},
        Refusal{"\n[[metric]]\nname = \"m\"\nkind = \"count\"\nkey = \"id\"\nlabel = \"k\"\n",
                "/etc/seatwatch/seatwatch.toml:2:1: metric.counts: is required: the counts, "
                "{ name, table, where? } each"},
        Refusal{"\n[[metric]]\nname = \"m\"\nkind = \"count\"\nkey = \"id\"\n"
                "counts = [{ name = \"a\", table = \"t\" }]\n",
                "/etc/seatwatch/seatwatch.toml:2:1: metric.label: is required: the label whose "
                "value names each count"},
        Refusal{"\n[[metric]]\nname = \"m\"\nkind = \"count\"\nkey = \"id\"\nlabel = \"id\"\n"
                "counts = [{ name = \"a\", table = \"t\" }]\n",
                "/etc/seatwatch/seatwatch.toml:6:9: metric.label: \"id\" is a label of the key "
                "already"},
        Refusal{"\n[[metric]]\nname = \"m\"\nkind = \"count\"\nkey = \"id\"\nlabel = \"k\"\n"
                "counts = [{ name = \"a\", table = \"t\" }, { name = \"a\", table = \"u\" }]\n",
                "/etc/seatwatch/seatwatch.toml:7:10: metric.counts: count \"a\" is listed twice"},
        Refusal{"\n[[metric]]\nname = \"m\"\nkind = \"count\"\nkey = \"id\"\nlabel = \"k\"\n"
                "counts = [{ name = \"a\", table = \"t\", where = \"x); DROP TABLE t; --\" }]\n",
                "/etc/seatwatch/seatwatch.toml:7:46: metric.counts.where: closes a parenthesis "
                "it did not open"},
        Refusal{"\n[[metric]]\nname = \"m\"\nkind = \"count\"\nkey = \"id\"\nlabel = \"k\"\n"
                "counts = [{ name = \"a\", table = \"t\", columns = [\"x\", \"y\"] }]\n",
                "/etc/seatwatch/seatwatch.toml:7:10: metric.counts.columns: count \"a\" names 2 "
                "key columns; the key has 1"},
        Refusal{"\n[[metric]]\nname = \"m\"\nkind = \"count\"\nkey = \"id\"\nlabel = \"k\"\n"
                "counts = [{ name = \"a\", table = \"t\" }]\nsql = \"m.sql\"\n",
                "/etc/seatwatch/seatwatch.toml:8:7: metric.sql: is not taken by a metric with "
                "kind: seatwatch writes its SQL (drop kind to write it yourself)"},
        Refusal{"\n[[invariant]]\ncheck = \"c\"\nname = \"x\"\nkind = \"check\"\nkey = \"a\"\n"
                "rows = { table = \"t\" }\ncondition = \"a > 0\"\ninterval = \"5s\"\n"
                "[[metric]]\ncheck = \"c\"\nname = \"m\"\nkind = \"count\"\nkey = \"a\"\n"
                "label = \"k\"\ncounts = [{ name = \"n\", table = \"t\" }]\ninterval = \"9s\"\n",
                "/etc/seatwatch/seatwatch.toml:17:12: metric.interval: differs from that of "
                "check \"c\", whose pass the metric reads: leave it out"},
        Refusal{"\n[[invariant]]\ncheck = \"c\"\nname = \"x\"\nkind = \"check\"\nkey = \"a\"\n"
                "rows = { table = \"t\" }\ncondition = \"a > 0\"\n"
                "[[metric]]\ncheck = \"c\"\nname = \"m\"\nkind = \"count\"\nkey = \"b\"\n"
                "label = \"k\"\ncounts = [{ name = \"n\", table = \"t\" }]\n",
                "/etc/seatwatch/seatwatch.toml:13:7: metric.key: metric m rides on check \"c\" "
                "and must share its key's labels: one pass, one key"}));

}  // namespace
}  // namespace seatwatch::config
