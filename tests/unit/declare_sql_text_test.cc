// The quoting and the expression guard every declared invariant's SQL goes
// through.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "declare/identifier.h"
#include "declare/sql_expression.h"
#include "declare/sql_text.h"

namespace seatwatch::declare {
namespace {

TEST(QuoteIdentifierTest, PlainLowerCaseNamesStayBare) {
  EXPECT_EQ(QuoteIdentifier("seats"), "seats");
  EXPECT_EQ(QuoteIdentifier("event_id"), "event_id");
  EXPECT_EQ(QuoteIdentifier("_x$1"), "_x$1");
  // Unreserved keywords need no quotes, as quote_ident() leaves them.
  EXPECT_EQ(QuoteIdentifier("status"), "status");
  EXPECT_EQ(QuoteIdentifier("name"), "name");
}

TEST(QuoteIdentifierTest, CaseSpacesDigitsAndReservedWordsAreQuoted) {
  EXPECT_EQ(QuoteIdentifier("Payment"), "\"Payment\"");
  EXPECT_EQ(QuoteIdentifier("order"), "\"order\"");
  EXPECT_EQ(QuoteIdentifier("user"), "\"user\"");
  EXPECT_EQ(QuoteIdentifier("order line"), "\"order line\"");
  EXPECT_EQ(QuoteIdentifier("1st"), "\"1st\"");
  EXPECT_EQ(QuoteIdentifier("a\"b"), "\"a\"\"b\"");
}

TEST(QuoteIdentifierTest, TablesAreQuotedPartByPart) {
  EXPECT_EQ(QuoteTable({"", "seats"}), "seats");
  EXPECT_EQ(QuoteTable({"ticketing", "Payment"}), "ticketing.\"Payment\"");
  EXPECT_EQ(QuoteTable({"Sales", "order"}), "\"Sales\".\"order\"");
  EXPECT_EQ(TableText({"ticketing", "Payment"}), "ticketing.Payment");
}

TEST(QuoteIdentifierTest, TheKeywordListIsPostgres15s) {
  // Spot checks of each category quote_ident() quotes: reserved,
  // column-name and type-or-function-name keywords.
  for (const char* word : {"select", "between", "authorization", "xmltable", "all"}) {
    EXPECT_TRUE(IsQuotedKeyword(word)) << word;
  }
  for (const char* word : {"status", "seat", "abort", "zone", "a"}) {
    EXPECT_FALSE(IsQuotedKeyword(word)) << word;
  }
}

TEST(ExpressionProblemTest, OrdinaryExpressionsPass) {
  EXPECT_EQ(ExpressionProblem("status = 'sold'"), "");
  EXPECT_EQ(ExpressionProblem("status = 'sold' OR (status = 'held' AND hold_expires_at > now())"), "");
  EXPECT_EQ(ExpressionProblem("note = 'a;b)' -- a ) in a comment; too\n"), "");
  EXPECT_EQ(ExpressionProblem("\"weird;name\" > 0 /* ( nested /* ) */ */"), "");
  EXPECT_EQ(ExpressionProblem("body = $tag$ ); $1 $tag$"), "");
  EXPECT_EQ(ExpressionProblem("x = E'it\\'s'"), "");
  EXPECT_EQ(ExpressionProblem("price$usd > 0"), "");
}

TEST(ExpressionProblemTest, AnythingThatCouldLeaveItsParenthesesIsRefused) {
  EXPECT_EQ(ExpressionProblem("true); DROP TABLE seats; --"),
            "closes a parenthesis it did not open");
  EXPECT_EQ(ExpressionProblem("true; DELETE FROM seats"),
            "has a ';': it must be one expression, not statements");
  EXPECT_EQ(ExpressionProblem("(status = 'sold'"), "leaves a parenthesis open");
  EXPECT_EQ(ExpressionProblem("id = $1"), "uses a parameter ($1...): write the value itself");
  EXPECT_EQ(ExpressionProblem("status = 'sold"), "has a string that does not end");
  EXPECT_EQ(ExpressionProblem("\"status = 1"), "has a quoted name that does not end");
  EXPECT_EQ(ExpressionProblem("a /* b"), "has a comment that does not end");
  EXPECT_EQ(ExpressionProblem("a = $x$ b"), "has a $x$ string that does not end");
  EXPECT_EQ(ExpressionProblem("   "), "is empty");
  EXPECT_EQ(ExpressionProblem(std::string("a\0b", 3)), "holds a NUL byte");
  EXPECT_EQ(ExpressionProblem(std::string(kMaxExpressionLength + 1, 'x')),
            "is 8193 bytes; at most 8192 are allowed");
}

TEST(SqlTextTest, KeyFilterNamesEachColumnsParameter) {
  EXPECT_EQ(KeyFilter{}.On("r", {"event_id"}), "");
  EXPECT_EQ((KeyFilter{{1}, ""}.On("r", {"event_id"})), " AND r.event_id = ANY ($1)");
  EXPECT_EQ((KeyFilter{{1, 2}, ""}.On("i", {"Event", "seat"})),
            " AND i.\"Event\" = ANY ($1) AND i.seat = ANY ($2)");
}

TEST(SqlTextTest, KeyFilterOfARowNamesItsKeyColumns) {
  KeyFilter one_key;
  one_key.row = "u";
  EXPECT_FALSE(one_key.all());
  EXPECT_EQ(one_key.On("i", {"Event", "seat"}), " AND i.\"Event\" = u.k1 AND i.seat = u.k2");
}

TEST(SqlTextTest, NumbersAreWrittenExactly) {
  EXPECT_EQ(Number(4), "4");
  EXPECT_EQ(Number(0), "0");
  EXPECT_EQ(Number(2.5), "2.5");
  EXPECT_EQ(Number(1e20), "1e+20");
}

TEST(SqlTextTest, PastedExpressionsSitOnTheirOwnLines) {
  // A trailing comment in the operator's text must not swallow the ")".
  EXPECT_EQ(Pasted("a > 1 -- note"), "(\na > 1 -- note\n)");
}

}  // namespace
}  // namespace seatwatch::declare
