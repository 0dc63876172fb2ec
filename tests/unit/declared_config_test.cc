// [[invariant]] entries with `kind`: parsed, checked against their kind's
// rules, and lowered into one query entry per check; every refusal names
// the file, line and key.
#include <gtest/gtest.h>

#include <string>

#include "config_text.h"

namespace seatwatch::config {
namespace {

constexpr const char* kCapacity = R"(
[[invariant]]
check = "capacity"
name = "workshop_overbooked"
help = "More registrations than seats"
kind = "at_most"
key = ["workshop_id"]
rows = { table = "registration", columns = ["workshop_id"] }
limit = { table = "workshop", columns = ["id"], column = "capacity" }

[[invariant]]
check = "capacity"
name = "workshop_counter_drift"
kind = "counter"
key = "id"
labels = ["workshop_id"]
table = "workshop"
columns = ["id"]
column = "seats_taken"
rows = { table = "registration", columns = ["workshop_id"] }
)";

TEST(DeclaredConfigTest, EntriesOfOneCheckBecomeOneQueryEntry) {
  Config config = ParseText(kCapacity);
  ASSERT_EQ(config.queries.size(), 1u);
  const QueryConfig& q = config.queries[0];
  EXPECT_TRUE(q.compiled);
  EXPECT_EQ(q.name, "capacity");
  EXPECT_EQ(q.invariants, (std::vector<std::string>{"workshop_overbooked", "workshop_counter_drift"}));
  EXPECT_EQ(q.labels, std::vector<std::string>{"workshop_id"});
  EXPECT_EQ(q.value, "seatwatch_violations");
  EXPECT_EQ(q.invariant_column, "seatwatch_invariant");
  EXPECT_EQ(q.HelpOf("workshop_overbooked"), "More registrations than seats");
  EXPECT_EQ(q.declared.at("workshop_counter_drift"), "counter");
  // The change feed's map is derived: each table by its column holding the key.
  EXPECT_EQ(q.key, "workshop_id");
  EXPECT_EQ(q.tables, (std::map<std::string, std::string>{{"registration", "workshop_id"},
                                                          {"workshop", "id"}}));
  EXPECT_TRUE(q.incremental());
  EXPECT_NE(q.scoped_sql.find("r.workshop_id = ANY ($1)"), std::string::npos);
  EXPECT_NE(q.scoped_sql.find("t.id = ANY ($1)"), std::string::npos);
  EXPECT_EQ(q.sql.find("$1"), std::string::npos);
  EXPECT_EQ(q.detail_sql.size(), 2u);
  EXPECT_EQ(q.KeyLocation("name").line, 3);
}

TEST(DeclaredConfigTest, EachEntryIsItsOwnCheckByDefault) {
  Config config = ParseText(R"(
[[invariant]]
name = "negative_stock"
kind = "check"
key = "id"
rows = { table = "product" }
condition = "stock >= 0"
)");
  ASSERT_EQ(config.queries.size(), 1u);
  EXPECT_EQ(config.queries[0].name, "negative_stock");
  EXPECT_EQ(config.queries[0].invariants, std::vector<std::string>{"negative_stock"});
}

TEST(DeclaredConfigTest, SubTablesReadLikeInlineTables) {
  Config config = ParseText(R"toml(
[[invariant]]
name = "fan_over_limit"
kind = "at_most"
key = ["event_id"]
limit = 4
[invariant.rows]
table = "seats"
columns = ["event_id", "holder"]
expires = "hold_expires_at"
where = """
status = 'sold'
OR (status = 'held' AND hold_expires_at > now())"""
)toml");
  const QueryConfig& q = config.queries.at(0);
  EXPECT_NE(q.sql.find("HAVING count(*) > 4"), std::string::npos);
  EXPECT_EQ(q.expiry_column, "seatwatch_next_expiry");
  EXPECT_NE(q.sql.find("min(r.hold_expires_at)"), std::string::npos);
}

TEST(DeclaredConfigTest, SeveralKeyColumnsRunFullPassesOnly) {
  Config config = ParseText(R"(
[[invariant]]
name = "double_booked"
kind = "unique"
key = ["event_id", "seat"]
rows = { table = "tickets", columns = ["event_id", "seat"] }
)");
  const QueryConfig& q = config.queries.at(0);
  EXPECT_FALSE(q.AsksIncremental());
  EXPECT_EQ(q.not_incremental, "its key has 2 columns; incremental mode takes a key of one column");
  EXPECT_NE(q.detail_sql.at("double_booked").find("r.seat = ANY ($2)"), std::string::npos);
}

struct Refusal {
  const char* toml;
  const char* error;
};

class DeclaredConfigRefusalTest : public ::testing::TestWithParam<Refusal> {};

TEST_P(DeclaredConfigRefusalTest, NamesFileLineAndKey) {
  EXPECT_EQ(ErrorOf(GetParam().toml), GetParam().error);
}

// Each entry starts on line 2 ("[[invariant]]").
INSTANTIATE_TEST_SUITE_P(
    Hostile, DeclaredConfigRefusalTest,
    ::testing::Values(
        Refusal{"\n[[invariant]]\nname = \"x\"\nkind = \"exist\"\nkey = \"id\"\n",
                "/etc/seatwatch/seatwatch.toml:4:8: invariant.kind: must be \"exists\", "
                "\"unique\", \"at_most\", \"counter\" or \"check\""},
        Refusal{"\n[[invariant]]\nname = \"x\"\nkind = \"exists\"\nkey = \"id\"\n"
                "rows = { table = \"seats\", columns = [\"id\"] }\n",
                "/etc/seatwatch/seatwatch.toml:2:1: invariant.in: is required by kind exists: "
                "where a match is looked for"},
        Refusal{"\n[[invariant]]\nname = \"x\"\nkind = \"check\"\nrows = { table = \"t\" }\n"
                "condition = \"a > 0\"\n",
                "/etc/seatwatch/seatwatch.toml:2:1: invariant.key: is required: the columns each "
                "violation is counted by"},
        Refusal{"\n[[invariant]]\nname = \"x\"\nkind = \"check\"\nkey = \"id\"\n"
                "rows = { table = \"t\" }\ncondition = \"a > 0); DROP TABLE t; --\"\n",
                "/etc/seatwatch/seatwatch.toml:7:13: invariant.condition: closes a parenthesis "
                "it did not open"},
        Refusal{"\n[[invariant]]\nname = \"x\"\nkind = \"check\"\nkey = \"id\"\n"
                "rows = { table = \"t\", where = \"a = $1\" }\ncondition = \"a > 0\"\n",
                "/etc/seatwatch/seatwatch.toml:6:31: invariant.rows.where: uses a parameter "
                "($1...): write the value itself"},
        Refusal{"\n[[invariant]]\nname = \"x\"\nkind = \"check\"\nkey = \"id\"\n"
                "rows = { table = '\"Payment\"' }\ncondition = \"a > 0\"\n",
                "/etc/seatwatch/seatwatch.toml:6:18: invariant.rows.table: the table name "
                "holds a double quote: write the name as the catalog stores "
                "it, without quotes (seatwatch quotes it)"},
        Refusal{"\n[[invariant]]\nname = \"x\"\nkind = \"check\"\nkey = \"id\"\n"
                "rows = { table = \"t\" }\ncondition = \"a > 0\"\nsql = \"x.sql\"\n",
                "/etc/seatwatch/seatwatch.toml:8:7: invariant.sql: is not taken by an entry "
                "with kind: seatwatch writes its SQL (drop kind to write it yourself)"},
        Refusal{"\n[[invariant]]\nname = \"x\"\nkind = \"check\"\nkey = \"id\"\n"
                "rows = { table = \"t\" }\ncondition = \"a > 0\"\nlimit = 3\n",
                "/etc/seatwatch/seatwatch.toml:8:9: invariant.limit: is not taken by kind check "
                "(it takes rows and condition)"},
        Refusal{"\n[[invariant]]\nname = \"x\"\nkind = \"exists\"\nkey = \"venue_id\"\n"
                "rows = { table = \"s\", columns = [\"a\"] }\nin = { table = \"t\", columns = "
                "[\"a\"] }\n",
                "/etc/seatwatch/seatwatch.toml:5:7: invariant.key: \"venue_id\" is not one of "
                "rows.columns (the key must be among them, so that each row belongs to one key)"},
        Refusal{"\n[[invariant]]\nname = \"x\"\nkind = \"exists\"\nkey = \"a\"\n"
                "rows = { table = \"s\", columns = [\"a\", \"b\"] }\nin = { table = \"t\", columns = "
                "[\"a\"] }\n",
                "/etc/seatwatch/seatwatch.toml:7:31: invariant.in.columns: must have as many "
                "columns as rows.columns (2)"},
        Refusal{"\n[[invariant]]\nname = \"x\"\nkind = \"at_most\"\nkey = \"a\"\n"
                "rows = { table = \"s\", columns = [\"a\"], bogus = 1 }\nlimit = 2\n",
                "/etc/seatwatch/seatwatch.toml:6:40: invariant.rows.bogus: unknown key"},
        Refusal{"\n[[invariant]]\nname = \"x\"\nkind = \"check\"\nkey = \"Order Id\"\n"
                "rows = { table = \"t\" }\ncondition = \"a > 0\"\n",
                "/etc/seatwatch/seatwatch.toml:5:7: invariant.key: \"Order Id\" is not a valid "
                "Prometheus label name (nor may it start with seatwatch_): name the key's labels "
                "with `labels`"},
        Refusal{"\n[[invariant]]\ncheck = \"c\"\nname = \"x\"\nkind = \"check\"\nkey = \"a\"\n"
                "rows = { table = \"t\" }\ncondition = \"a > 0\"\n"
                "[[invariant]]\ncheck = \"c\"\nname = \"y\"\nkind = \"check\"\nkey = \"b\"\n"
                "rows = { table = \"t\" }\ncondition = \"b > 0\"\n",
                "/etc/seatwatch/seatwatch.toml:13:7: invariant.key: the entries of check \"c\" "
                "must share their key's labels: one pass, one key"},
        Refusal{"\n[[invariant]]\nname = \"x\"\nkind = \"check\"\nkey = \"id\"\n"
                "rows = { table = \"t\",\n  where = \"a > 0\" }\ncondition = \"a > 0\"\n",
                "/etc/seatwatch/seatwatch.toml:6:22: Error while parsing inline table: expected key "
                "or closing '}', saw '\\n' (an inline table { ... } must fit on one line: write "
                "a long one as a sub-table, e.g. [invariant.rows] below its entry)"}));

TEST(DeclaredConfigTest, AVeryLongNameIsRefusedWithoutEchoingIt) {
  std::string name(10000, 'x');
  std::string error = ErrorOf("\n[[invariant]]\nname = \"n\"\nkind = \"check\"\nkey = \"" + name +
                              "\"\nrows = { table = \"t\" }\ncondition = \"a > 0\"\n");
  EXPECT_EQ(error,
            "/etc/seatwatch/seatwatch.toml:5:7: invariant.key: a column is 10000 characters "
            "long; at most 63");
  std::string table_error = ErrorOf("\n[[invariant]]\nname = \"n\"\nkind = \"check\"\nkey = \"a\"\n"
                                    "rows = { table = \"" + name + "\" }\ncondition = \"a > 0\"\n");
  EXPECT_EQ(table_error,
            "/etc/seatwatch/seatwatch.toml:6:18: invariant.rows.table: is 10000 characters "
            "long; at most 127");
}

TEST(DeclaredConfigTest, TwoChecksMappingOneTableToDifferentKeysAreRefusedWithChangesOn) {
  std::string toml = std::string(kCapacity) + R"(
[[invariant]]
name = "registration_without_email"
kind = "check"
key = "email"
rows = { table = "registration" }
condition = "email <> ''"

[changes]
enabled = true
)";
  EXPECT_EQ(ErrorOf(toml),
            "/etc/seatwatch/seatwatch.toml:25:7: invariant.key: check \"registration_without_email\" "
            "maps table registration to key column \"email\" and \"capacity\" to \"workshop_id\": "
            "the change feed keeps one key column per table (give them the same key)");
}

}  // namespace
}  // namespace seatwatch::config
