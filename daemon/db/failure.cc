#include "db/failure.h"

#include <pqxx/except>

namespace seatwatch::db {

const char* ReasonLabel(FailureReason reason) {
  switch (reason) {
    case FailureReason::kTimeout: return "timeout";
    case FailureReason::kLockTimeout: return "lock_timeout";
    case FailureReason::kConnection: return "connection";
    case FailureReason::kSql: return "sql";
    case FailureReason::kTooManyRows: return "too_many_rows";
    case FailureReason::kDuplicateSeries: return "duplicate_series";
    case FailureReason::kBadValue: return "bad_value";
    case FailureReason::kRecoveryConflict: return "recovery_conflict";
  }
  return "sql";
}

FailureReason ClassifySqlState(const std::string& sqlstate) {
  if (sqlstate == "57014") return FailureReason::kTimeout;      // query_canceled
  if (sqlstate == "55P03") return FailureReason::kLockTimeout;  // lock_not_available
  if (sqlstate == "40001") return FailureReason::kRecoveryConflict;  // see failure.h
  // Class 08 (connection exception), admin/crash shutdown, cannot connect now.
  if (sqlstate.rfind("08", 0) == 0 || sqlstate == "57P01" || sqlstate == "57P02" ||
      sqlstate == "57P03") {
    return FailureReason::kConnection;
  }
  return FailureReason::kSql;
}

bool IsRecoveryConflictMessage(const std::string& message) {
  return message.find("due to conflict with recovery") != std::string::npos;
}

FailureReason ClassifyException(const std::exception& error) {
  if (const auto* data = dynamic_cast<const DataError*>(&error)) return data->reason();
  if (dynamic_cast<const pqxx::broken_connection*>(&error)) {
    return IsRecoveryConflictMessage(error.what()) ? FailureReason::kRecoveryConflict
                                                   : FailureReason::kConnection;
  }
  if (dynamic_cast<const pqxx::in_doubt_error*>(&error)) return FailureReason::kConnection;
  // 40001: libpqxx 6.4 throws this class, which is no sql_error and carries
  // no SQLSTATE (see ClassifySqlState for why it is a recovery conflict).
  if (dynamic_cast<const pqxx::serialization_failure*>(&error)) {
    return FailureReason::kRecoveryConflict;
  }
  if (const auto* sql = dynamic_cast<const pqxx::sql_error*>(&error)) {
    return ClassifySqlState(sql->sqlstate());
  }
  return FailureReason::kSql;
}

}  // namespace seatwatch::db
