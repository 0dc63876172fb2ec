#include "support/lock_rows.h"

namespace seatwatch::testing {

locks::SessionRow ClientSession(int pid, const std::string& state, double xact_age,
                                double state_age) {
  locks::SessionRow session;
  session.pid = pid;
  session.backend_type = "client backend";
  session.client = true;
  session.in_database = true;
  session.state = state;
  session.usename = "booking";
  session.xact_age_seconds = xact_age;
  session.state_age_seconds = state_age;
  return session;
}

locks::LockWaitRow LockWait(int pid, const std::string& locktype, std::vector<int> blockers,
                            double seconds) {
  locks::LockWaitRow wait;
  wait.pid = pid;
  wait.locktype = locktype;
  wait.mode = locktype == "tuple" ? "ExclusiveLock" : "ShareLock";
  if (locktype == "tuple") {
    wait.relation = 16400;
    wait.relation_name = "seats";
    wait.page = 0;
    wait.tuple = 5;
    wait.target = "tuple|5|16400|0|5||||||";
  } else {
    wait.target = "transactionid||||||||777|||";
  }
  wait.wait_seconds = seconds;
  wait.wait_start_us = 1000 + pid;
  wait.blockers = std::move(blockers);
  return wait;
}

}  // namespace seatwatch::testing
