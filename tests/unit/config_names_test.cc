// The hand-written name checks that replaced std::regex: the same language
// as the patterns they replaced, in constant stack for any length.
#include "config/names.h"

#include <gtest/gtest.h>

#include <string>

namespace seatwatch::config {
namespace {

TEST(ConfigNamesTest, Identifiers) {
  for (const char* good : {"a", "_", "sold_seat_without_ticket", "x9", "_a_1"}) EXPECT_TRUE(IsIdentifier(good)) << good;
  for (const char* bad : {"", "9x", "A", "a-b", "a b", "ä", "a.b"}) EXPECT_FALSE(IsIdentifier(bad)) << bad;
  EXPECT_FALSE(IsIdentifier(std::string("a\0b", 3)));
  EXPECT_TRUE(IsIdentifier(std::string(1000000, 'a'))) << "no recursion, whatever the length";
}

TEST(ConfigNamesTest, LabelNames) {
  for (const char* good : {"event_id", "Kind", "_x", "a1", "_"}) EXPECT_TRUE(IsLabelName(good)) << good;
  for (const char* bad : {"", "1a", "a-b", "__reserved", "a\x01", "a\n"}) EXPECT_FALSE(IsLabelName(bad)) << bad;
  EXPECT_TRUE(IsLabelName(std::string(1000000, 'L')));
}

TEST(ConfigNamesTest, TableNames) {
  for (const char* good : {"seats", "public.seats", "a$b", "_s.t_1"}) EXPECT_TRUE(IsTableName(good)) << good;
  for (const char* bad : {"", ".seats", "seats.", "a.b.c", "Seats", "seats; drop", "1seats", "$a"}) {
    EXPECT_FALSE(IsTableName(bad)) << bad;
  }
}

TEST(ConfigNamesTest, ListenAddresses) {
  for (const char* good : {"127.0.0.1:9646", ":9646", "[::1]:65535", "[::ffff:127.0.0.1]:1", "my_host-1.lan:80"}) {
    EXPECT_TRUE(IsListenAddress(good)) << good;
  }
  for (const char* bad : {"", "9646", "host:", "host:0", "host:65536", "host:099999", "host:+1", "[]:1",
                          "[::1:1", "::1]:1", "[::1]x:1", "[::g]:1", "a b:1", "a\n:1"}) {
    EXPECT_FALSE(IsListenAddress(bad)) << bad;
  }
  EXPECT_TRUE(IsListenAddress(std::string(1000000, 'h') + ":1"));
}

TEST(ConfigNamesTest, ControlCharactersArePrintedEscaped) {
  EXPECT_FALSE(HasControlCharacter("plain text, with ünïcode"));
  EXPECT_TRUE(HasControlCharacter(std::string("a\0b", 3)));
  EXPECT_TRUE(HasControlCharacter("a\x7f"));
  EXPECT_TRUE(HasControlCharacter("a\nb"));
  EXPECT_FALSE(HasControlCharacter("a\nb\tc", "\n\t"));
  EXPECT_TRUE(HasControlCharacter("a\rb", "\n\t"));
  EXPECT_EQ(Printable(std::string("a\0b\x1b[2J\n", 8)), "\"a\\x00b\\x1b[2J\\x0a\"");
}

}  // namespace
}  // namespace seatwatch::config
