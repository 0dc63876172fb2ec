#include "db/conninfo.h"

#include <gtest/gtest.h>

namespace seatwatch::db {
namespace {

TEST(MaskDsnTest, HidesPasswordInKeyValueForm) {
  EXPECT_EQ(MaskDsn("host=db user=mon password=hunter2 dbname=booking"),
            "host=db user=mon password=**** dbname=booking");
  EXPECT_EQ(MaskDsn("password='se cret' host=db"), "password=**** host=db");
  EXPECT_EQ(MaskDsn("host=db password = hunter2"), "host=db password = ****");
}

TEST(MaskDsnTest, HidesPasswordInUriForms) {
  EXPECT_EQ(MaskDsn("postgresql://mon:hunter2@db:5432/booking"), "postgresql://mon:****@db:5432/booking");
  EXPECT_EQ(MaskDsn("postgres://db/booking?user=mon&password=hunter2&sslmode=require"),
            "postgres://db/booking?user=mon&password=****&sslmode=require");
}

TEST(MaskDsnTest, LeavesDsnWithoutPasswordAlone) {
  EXPECT_EQ(MaskDsn("postgresql:///booking"), "postgresql:///booking");
  EXPECT_EQ(MaskDsn("host=/tmp dbname=booking"), "host=/tmp dbname=booking");
}

SessionSettings Settings() {
  SessionSettings settings;
  settings.application_name = "seatwatch";
  settings.connect_timeout = std::chrono::milliseconds(5000);
  settings.statement_timeout = std::chrono::milliseconds(5000);
  settings.lock_timeout = std::chrono::milliseconds(100);
  return settings;
}

TEST(BuildConninfoTest, BakesTimeoutsAndNameIntoOptions) {
  std::string conninfo = BuildConninfo("postgresql://mon@db:5433/booking", Settings());
  EXPECT_NE(conninfo.find("host='db'"), std::string::npos) << conninfo;
  EXPECT_NE(conninfo.find("port='5433'"), std::string::npos) << conninfo;
  EXPECT_NE(conninfo.find("dbname='booking'"), std::string::npos) << conninfo;
  EXPECT_NE(conninfo.find("application_name='seatwatch'"), std::string::npos) << conninfo;
  EXPECT_NE(conninfo.find("connect_timeout=5"), std::string::npos) << conninfo;
  EXPECT_NE(conninfo.find("-c statement_timeout=5000 -c lock_timeout=100 -c jit=off -c default_transaction_read_only=on"),
            std::string::npos)
      << conninfo;
}

TEST(BuildConninfoTest, KeepsUserOptionsAndQuotes) {
  std::string conninfo =
      BuildConninfo("host=db password='it\\'s' options='-c work_mem=4MB'", Settings());
  EXPECT_NE(conninfo.find("options='-c work_mem=4MB -c statement_timeout=5000"), std::string::npos)
      << conninfo;
  EXPECT_NE(conninfo.find("password='it\\'s'"), std::string::npos) << conninfo;
}

TEST(BuildConninfoTest, WritableSessionOmitsReadOnly) {
  SessionSettings settings = Settings();
  settings.read_only = false;
  EXPECT_EQ(BuildConninfo("dbname=x", settings).find("default_transaction_read_only"),
            std::string::npos);
}

TEST(BuildConninfoTest, UnparsableDsnThrowsWithoutPassword) {
  try {
    BuildConninfo("host=db password=hunter2 bogus", Settings());
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).find("hunter2"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace seatwatch::db
