#pragma once

#include <exception>
#include <string>

namespace seatwatch::db {

// Why a check or a batch failed; the label values of *_errors_total.
enum class FailureReason { kTimeout, kLockTimeout, kConnection, kSql };

const char* ReasonLabel(FailureReason reason);

// SQLSTATE to reason. libpqxx 6.4 has no classes for 57014 or 55P03, so the
// code is the only reliable signal.
FailureReason ClassifySqlState(const std::string& sqlstate);

// Classifies whatever a check threw: broken connections, SQL errors by
// SQLSTATE, anything else as "sql".
FailureReason ClassifyException(const std::exception& error);

}  // namespace seatwatch::db
