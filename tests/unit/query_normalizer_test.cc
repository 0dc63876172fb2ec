#include "locks/query_normalizer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "locks/query_text.h"

namespace seatwatch::locks {
namespace {

using namespace std::string_literals;

struct Case {
  std::string sql;
  std::string normalized;
};

void ExpectNormalized(const std::vector<Case>& cases) {
  for (const auto& c : cases) EXPECT_EQ(NormalizeQuery(c.sql), c.normalized) << c.sql;
}

TEST(NormalizeQueryTest, ReplacesEveryLiteralForm) {
  ExpectNormalized({
      {"SELECT 1", "SELECT $1"},
      {"SELECT * FROM seats WHERE seat = 'A12' AND event_id = 1",
       "SELECT * FROM seats WHERE seat = $1 AND event_id = $2"},
      {"ALTER ROLE filler PASSWORD 'TopSecret_zzz'", "ALTER ROLE filler PASSWORD $1"},
      {"SELECT 'it''s', ''", "SELECT $1, $2"},
      {"SELECT E'it\\'s \\\\', e'\\n'", "SELECT $1, $2"},
      {"SELECT E'ends with \\\\' || 'x'", "SELECT $1 || $2"},
      {"SELECT U&'d\\0061t\\+000061', u&'x'", "SELECT $1, $2"},
      {"SELECT U&'d!0061t' UESCAPE '!'", "SELECT $1 UESCAPE $2"},
      {"SELECT B'1010', b'1', X'1F', x'ff', N'nat', n'it''s'", "SELECT $1, $2, $3, $4, $5, $6"},
      {"SELECT $$dollar 'quoted' \\ $$", "SELECT $1"},
      {"SELECT $fn$ body $$ inner $$ $f$ $fn$, 1", "SELECT $1, $2"},
      {"SELECT $a$x$ab$y$a$ || $_1$z$_1$", "SELECT $1 || $2"},
      {"SELECT 1.5, .5, 5., 1e-3, 2E+4, 0x1F, 0o17, 0b101, 1_000, 42",
       "SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10"},
      {"SELECT -1, a-1, a - 2", "SELECT -$1, a-$2, a - $3"},
      {"SELECT 1::int, '2020-01-01'::date, interval '1 day', CAST('7' AS int)",
       "SELECT $1::int, $2::date, interval $3, CAST($4 AS int)"},
      {"SELECT x FROM t WHERE y IN (1, 2, 3) LIMIT 10 OFFSET 20",
       "SELECT x FROM t WHERE y IN ($1, $2, $3) LIMIT $4 OFFSET $5"},
      {"SELECT arr[1:2] FROM t", "SELECT arr[$1:$2] FROM t"},
      // Literals continued across a newline are one constant, as the server reads them.
      {"SELECT 'a'\n  'b', 'c' 'd'", "SELECT $1, $2 $3"},
  });
}

TEST(NormalizeQueryTest, KeepsIdentifiersParametersAndCode) {
  ExpectNormalized({
      {"SELECT t1.c2, s3.\"Quoted 'not a literal' 1\" FROM s3 AS t1",
       "SELECT t1.c2, s3.\"Quoted 'not a literal' 1\" FROM s3 AS t1"},
      {"SELECT \"a\"\"b\" FROM \"t\"", "SELECT \"a\"\"b\" FROM \"t\""},
      {"SELECT U&\"d\\0061t\" FROM t", "SELECT U&\"d\\0061t\" FROM t"},
      {"SELECT a$1, b$$c, e, x, u, n FROM t_2", "SELECT a$1, b$$c, e, x, u, n FROM t_2"},
      // Existing parameters stay; placeholders are numbered after the highest.
      {"SELECT $1, 'x', $3", "SELECT $1, $4, $3"},
      {"UPDATE seats SET status = $2 WHERE seat = 'A1'", "UPDATE seats SET status = $2 WHERE seat = $3"},
      {"SELECT $name", "SELECT $name"},
      {"autovacuum: VACUUM public.seats", "autovacuum: VACUUM public.seats"},
      {"", ""},
  });
}

// pg_stat_statements keeps comments; free text can carry a secret, so they go.
TEST(NormalizeQueryTest, DropsComments) {
  ExpectNormalized({
      {"SELECT 1 -- password 'hunter2'\nFROM t", "SELECT $1 \nFROM t"},
      {"SELECT a--b\nFROM t", "SELECT a\nFROM t"},
      {"SELECT /* outer /* inner */ still 'x' */ 1", "SELECT $1"},
      {"SELECT a/**/b, c /*/ x */d", "SELECT a b, c d"},
      {"SELECT 1 /* unterminated hunter2", "SELECT $1 "},
      {"SELECT 1 -- hunter2", "SELECT $1 "},
      {"SELECT '--not a comment', \"/*ident*/\"", "SELECT $1, \"/*ident*/\""},
      {"SELECT $$ /* $$, 2 /* 'x' */", "SELECT $1, $2 "},
  });
}

// pg_stat_activity cuts texts at track_activity_query_size, often inside a
// literal: whatever is unterminated is hidden to the end.
TEST(NormalizeQueryTest, HidesUnterminatedLiteralsToTheEnd) {
  ExpectNormalized({
      {"UPDATE x SET p = 'TopSec", "UPDATE x SET p = $1"},
      {"UPDATE x SET p = E'Top\\'Sec", "UPDATE x SET p = $1"},
      {"SELECT $$TopSec", "SELECT $1"},
      {"SELECT $tag$TopSec $tag", "SELECT $1"},
      {"SELECT B'0101", "SELECT $1"},
      {"SELECT U&'TopSec", "SELECT $1"},
      {"SELECT 'a'\n", "SELECT $1\n"},
      {"SELECT \"unterminated ident", "SELECT \"unterminated ident"},
      {"SELECT '", "SELECT $1"},
      {"SELECT E'\\", "SELECT $1"},
  });
}

// A session with standard_conforming_strings = off reads a backslash in '...'
// as an escape: whichever reading is the session's, its literals are hidden.
TEST(NormalizeQueryTest, HidesLiteralsUnderEitherBackslashReading) {
  // Off: one literal 'ab\'TopSecret'. On: 'ab\' then code then an open quote.
  EXPECT_EQ(NormalizeQuery("ALTER ROLE r PASSWORD 'ab\\'TopSecret'"), "ALTER ROLE r PASSWORD $1");
  // On: 'a\''b', code, an open quote. Off: 'a\'', code b, ' secret', code.
  std::string both = NormalizeQuery("SELECT 'a\\''b' secret' rest");
  EXPECT_EQ(both.find("secret"), std::string::npos) << both;
  EXPECT_EQ(both.find("rest"), std::string::npos) << both;
  // On: two literals. Off: one literal, then code abc: abc is still hidden.
  std::string two = NormalizeQuery("SELECT 'C:\\' , 'abc'");
  EXPECT_EQ(two.find("abc"), std::string::npos) << two;
  EXPECT_EQ(NormalizeQuery("SELECT 'a\\', x"), "SELECT $1");
}

TEST(NormalizeQueryTest, TotalOnAnyBytes) {
  EXPECT_EQ(NormalizeQuery("SELECT '\0secret'"s), "SELECT $1");
  EXPECT_EQ(NormalizeQuery("SELECT\0 1"s), "SELECT\0 $1"s);
  EXPECT_EQ(NormalizeQuery("SELECT \xff\xfe FROM t WHERE x = '\xc3'"),
            "SELECT \xff\xfe FROM t WHERE x = $1");
  EXPECT_EQ(NormalizeQuery("\xc3\xa9t\xc3\xa9 = 'caf\xc3\xa9'"), "\xc3\xa9t\xc3\xa9 = $1");
  EXPECT_EQ(NormalizeQuery("$"), "$");
  EXPECT_EQ(NormalizeQuery("$$"), "$1");
  EXPECT_EQ(NormalizeQuery("/*"), "");
  EXPECT_EQ(NormalizeQuery("-"), "-");
  EXPECT_EQ(NormalizeQuery("."), ".");
  EXPECT_EQ(NormalizeQuery("U&"), "U&");
  EXPECT_EQ(NormalizeQuery("$99999999999999999999999 'x'"), "$99999999999999999999999 $1000000001");
}

// 1 MB of the worst patterns for a naive lexer: every one is linear. A
// quadratic scan of 1 MB takes hours, so the generous bound is the claim.
TEST(NormalizeQueryTest, MegabyteInputsAreLinear) {
  const size_t mb = 1 << 20;
  std::vector<std::string> inputs = {
      std::string(mb, '\''), std::string(mb, '$'),  std::string(mb, '"'),
      std::string(mb, '\\'), std::string(mb, '1'),  std::string(mb, 'a'),
  };
  std::string pattern;
  for (const char* unit : {"/*", "$a", "E'\\", "$a$", "'\n", "-", "*/", "$1"}) {
    pattern.clear();
    while (pattern.size() < mb) pattern += unit;
    inputs.push_back(pattern);
  }
  // A long tag and a body full of near-misses of it.
  std::string tag(mb / 4, 't');
  inputs.push_back("$" + tag + "$" + [&] {
    std::string body;
    while (body.size() < mb / 2) body += "$" + tag.substr(0, 1000);
    return body;
  }());
  std::uint32_t seed = 12345;
  std::string random(mb, '\0');
  for (char& c : random) {
    seed = seed * 1103515245 + 12345;
    static const char kBytes[] = "'\"$/*-\\eEuU&\nxa1. \xff";
    c = kBytes[(seed >> 16) % (sizeof kBytes - 1)];
  }
  inputs.push_back(random);
  auto start = std::chrono::steady_clock::now();
  for (const auto& input : inputs) {
    std::string out = NormalizeQuery(input);
    EXPECT_LE(out.size(), input.size() * 6 + 16);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
}

TEST(ShownQueryTextTest, NormalizesBeforeCutting) {
  std::optional<std::string> query = "ALTER ROLE r PASSWORD 'TopSecret_zzz'";
  // Cutting first would leave "'TopSec" unterminated: still hidden, but the
  // order is the promise.
  EXPECT_EQ(ShownQueryText(QueryTextMode::kNormalized, query, 0), "ALTER ROLE r PASSWORD $1");
  EXPECT_EQ(ShownQueryText(QueryTextMode::kNormalized, query, 12), "ALTER ROLE r");
  EXPECT_EQ(ShownQueryText(QueryTextMode::kRaw, query, 0), *query);
  EXPECT_EQ(ShownQueryText(QueryTextMode::kRaw, query, 25), "ALTER ROLE r PASSWORD 'To");
  EXPECT_EQ(ShownQueryText(QueryTextMode::kNone, query, 0), std::nullopt);
  EXPECT_EQ(ShownQueryText(QueryTextMode::kNormalized, std::nullopt, 0), std::nullopt);
}

TEST(ShownQueryTextTest, CutsWholeUtf8Characters) {
  EXPECT_EQ(TruncateUtf8("caf\xc3\xa9s", 4), "caf\xc3\xa9");
  EXPECT_EQ(TruncateUtf8("\xe2\x82\xac\xe2\x82\xac", 1), "\xe2\x82\xac");
  EXPECT_EQ(TruncateUtf8("abc", 5), "abc");
  EXPECT_EQ(TruncateUtf8("abc", 0), "");
  EXPECT_EQ(TruncateUtf8(std::string(100, '\x80'), 2).size(), 8u);  // stray continuation bytes
}

}  // namespace
}  // namespace seatwatch::locks
