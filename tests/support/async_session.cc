#include "support/async_session.h"

#include <stdexcept>

namespace seatwatch::testing {

AsyncSession::AsyncSession(const std::string& dsn, const std::string& name)
    : connection_(PQconnectdb((dsn + " application_name=" + name).c_str())) {
  if (PQstatus(connection_) != CONNECTION_OK) {
    std::string error = PQerrorMessage(connection_);
    PQfinish(connection_);
    throw std::runtime_error("connect: " + error);
  }
  pid_ = PQbackendPID(connection_);
}

AsyncSession::~AsyncSession() { PQfinish(connection_); }

void AsyncSession::Send(const std::string& sql) {
  if (!PQsendQuery(connection_, sql.c_str())) {
    throw std::runtime_error(std::string("send: ") + PQerrorMessage(connection_));
  }
}

std::string AsyncSession::Finish() {
  std::string sqlstate;
  while (PGresult* result = PQgetResult(connection_)) {
    if (PQresultStatus(result) == PGRES_FATAL_ERROR && sqlstate.empty()) {
      const char* code = PQresultErrorField(result, PG_DIAG_SQLSTATE);
      sqlstate = code ? code : "?????";
    }
    PQclear(result);
  }
  return sqlstate;
}

std::string AsyncSession::Run(const std::string& sql) {
  Send(sql);
  return Finish();
}

}  // namespace seatwatch::testing
