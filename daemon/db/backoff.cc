#include "db/backoff.h"

#include <algorithm>

namespace seatwatch::db {

Backoff::Millis Backoff::Next() {
  long long wait = initial_.count();
  for (int i = 0; i < attempts_ && wait < cap_.count(); ++i) wait *= 2;
  ++attempts_;
  return Millis(std::min<long long>(wait, cap_.count()));
}

}  // namespace seatwatch::db
