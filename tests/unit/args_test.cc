#include "cli/args.h"

#include <gtest/gtest.h>

namespace seatwatch::cli {
namespace {

TEST(ArgsTest, ParsesEveryFlag) {
  Args args = ParseArgs({"--config", "a.toml", "--once", "--listen=127.0.0.1:1", "--log-level",
                         "debug"});
  EXPECT_EQ(args.config_path.value(), "a.toml");
  EXPECT_TRUE(args.once);
  EXPECT_FALSE(args.check_config);
  EXPECT_EQ(args.listen.value(), "127.0.0.1:1");
  EXPECT_EQ(args.log_level.value(), "debug");
}

TEST(ArgsTest, RejectsUnknownAndIncomplete) {
  EXPECT_THROW(ParseArgs({"--bogus"}), UsageError);
  EXPECT_THROW(ParseArgs({"--config"}), UsageError);
  EXPECT_THROW(ParseArgs({"--once=yes"}), UsageError);
  EXPECT_THROW(ParseArgs({"--once", "--check-config"}), UsageError);
}

TEST(ArgsTest, PrintSqlAndPrintSetup) {
  EXPECT_EQ(ParseArgs({"--print-sql"}).print_sql.value(), "");
  EXPECT_EQ(ParseArgs({"--print-sql", "booking"}).print_sql.value(), "booking");
  EXPECT_EQ(ParseArgs({"--print-sql", "--config", "a.toml"}).print_sql.value(), "");
  EXPECT_TRUE(ParseArgs({"--print-setup", "--config", "a.toml"}).print_setup);
  EXPECT_FALSE(ParseArgs({"--print-sql"}).print_setup);
  EXPECT_THROW(ParseArgs({"--print-setup=x"}), UsageError);
  EXPECT_THROW(ParseArgs({"--print-setup", "--print-sql"}), UsageError);
  EXPECT_THROW(ParseArgs({"--print-setup", "--check-config"}), UsageError);
  EXPECT_THROW(ParseArgs({"--print-sql", "--once"}), UsageError);
  EXPECT_NE(UsageText().find("--print-setup"), std::string::npos);
}

TEST(ArgsTest, RejectsAListenThatIsNoAddress) {
  // Checked like [http] listen: a 60,000-character value must be a usage
  // error, not a crash or a silent failure to bind.
  EXPECT_THROW(ParseArgs({"--listen", std::string(60000, 'a') + ":9646"}), UsageError);
  EXPECT_THROW(ParseArgs({"--listen=127.0.0.1"}), UsageError);
  EXPECT_THROW(ParseArgs({"--listen=127.0.0.1:70000"}), UsageError);
  EXPECT_THROW(ParseArgs({"--listen=bad host:1"}), UsageError);
  EXPECT_EQ(ParseArgs({"--listen=0.0.0.0:9646"}).listen.value(), "0.0.0.0:9646");
}

TEST(ArgsTest, HelpAndVersion) {
  EXPECT_TRUE(ParseArgs({"--help"}).help);
  EXPECT_TRUE(ParseArgs({"--version"}).version);
  EXPECT_NE(UsageText().find("--check-config"), std::string::npos);
}

}  // namespace
}  // namespace seatwatch::cli
