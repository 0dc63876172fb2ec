#include "db/failure.h"

#include <gtest/gtest.h>

#include <pqxx/except>

namespace seatwatch::db {
namespace {

TEST(FailureTest, ClassifiesSqlStates) {
  EXPECT_STREQ(ReasonLabel(ClassifySqlState("57014")), "timeout");
  EXPECT_STREQ(ReasonLabel(ClassifySqlState("55P03")), "lock_timeout");
  EXPECT_STREQ(ReasonLabel(ClassifySqlState("08006")), "connection");
  EXPECT_STREQ(ReasonLabel(ClassifySqlState("57P01")), "connection");
  EXPECT_STREQ(ReasonLabel(ClassifySqlState("42P01")), "sql");
  EXPECT_STREQ(ReasonLabel(ClassifySqlState("")), "sql");
}

TEST(FailureTest, ClassifiesExceptions) {
  EXPECT_EQ(ClassifyException(pqxx::broken_connection("gone")), FailureReason::kConnection);
  EXPECT_EQ(ClassifyException(pqxx::sql_error("x", "SELECT 1", "57014")), FailureReason::kTimeout);
  EXPECT_EQ(ClassifyException(pqxx::sql_error("x", "SELECT 1", "55P03")),
            FailureReason::kLockTimeout);
  EXPECT_EQ(ClassifyException(std::runtime_error("other")), FailureReason::kSql);
}

// libpqxx 6.4 throws 40001 as pqxx::serialization_failure, no sql_error.
TEST(FailureTest, SerializationFailureIsARecoveryConflict) {
  EXPECT_EQ(ClassifyException(pqxx::serialization_failure(
                "ERROR:  canceling statement due to conflict with recovery\n")),
            FailureReason::kRecoveryConflict);
}

}  // namespace
}  // namespace seatwatch::db
