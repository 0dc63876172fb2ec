#include "poll/recovery_watch.h"

#include "util/log.h"

namespace seatwatch::poll {

RecoveryWatch::Change RecoveryWatch::Observe(bool in_recovery, const std::string& lane,
                                             const std::string& masked_dsn) {
  std::optional<bool> before = in_recovery_;
  in_recovery_ = in_recovery;
  if (in_recovery && before != true) {
    log::Info("lane reads a standby (in recovery)", {{"lane", lane}, {"dsn", masked_dsn}});
    return Change::kToStandby;
  }
  if (!in_recovery && before == true) {
    log::Info("lane reads a primary now", {{"lane", lane}});
    return Change::kToPrimary;
  }
  return Change::kNone;
}

}  // namespace seatwatch::poll
