#pragma once

#include <array>
#include <exception>
#include <stdexcept>
#include <string>

namespace seatwatch::db {

// Why a check or a batch failed; the label values of *_errors_total.
enum class FailureReason {
  kTimeout,
  kLockTimeout,
  kConnection,
  kSql,
  kTooManyRows,      // the query returned more rows than the entry's max_rows
  kDuplicateSeries,  // two rows of one family with the same label set
  kBadValue,         // a value that is not a number, or not a count where one is needed
  // A standby cancelled the statement (or ended the session) because replay
  // had to remove row versions or take locks the check's snapshot needed
  // (max_standby_streaming_delay ran out): SQLSTATE 40001 "canceling
  // statement due to conflict with recovery", or the FATAL "terminating
  // connection due to conflict with recovery". seatwatch never runs
  // SERIALIZABLE, so a 40001 can mean nothing else. Retried once.
  kRecoveryConflict,
};

// Every reason, in label order of the docs: the one list that counters are
// initialised from, so a new reason cannot be forgotten there.
inline constexpr std::array<FailureReason, 8> kAllFailureReasons = {
    FailureReason::kTimeout,     FailureReason::kLockTimeout,     FailureReason::kConnection,
    FailureReason::kSql,         FailureReason::kTooManyRows,     FailureReason::kDuplicateSeries,
    FailureReason::kBadValue,    FailureReason::kRecoveryConflict,
};

const char* ReasonLabel(FailureReason reason);

// The data a query returned cannot be exported as it is (too many rows, a
// duplicate series, a value that is not a number). Carries its reason, so
// the poller counts it under that reason rather than as "sql".
class DataError : public std::runtime_error {
 public:
  DataError(FailureReason reason, const std::string& message)
      : std::runtime_error(message), reason_(reason) {}
  FailureReason reason() const { return reason_; }

 private:
  FailureReason reason_;
};

// SQLSTATE to reason. libpqxx 6.4 has no classes for 57014 or 55P03, so the
// code is the only reliable signal.
FailureReason ClassifySqlState(const std::string& sqlstate);

// Whether a message is the server's recovery-conflict text (the ERROR or the
// FATAL variant); libpq may have prefixed it with "FATAL:  " or appended its
// own "server closed the connection" lines.
bool IsRecoveryConflictMessage(const std::string& message);

// Classifies whatever a check threw: broken connections (recovery_conflict
// when the server's last words were the conflict FATAL), SQL errors by
// SQLSTATE, a DataError by its reason, anything else as "sql".
FailureReason ClassifyException(const std::exception& error);

}  // namespace seatwatch::db
