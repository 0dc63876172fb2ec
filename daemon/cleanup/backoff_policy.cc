#include "cleanup/backoff_policy.h"

#include <algorithm>

namespace seatwatch::cleanup {

namespace {

constexpr int kMaxFactor = 32;
constexpr BackoffPolicy::Millis kMaxWait = std::chrono::minutes(10);

}  // namespace

BackoffPolicy::Millis BackoffPolicy::Delay(Millis interval, int failures) {
  Millis cap = std::max(interval, std::min(interval * kMaxFactor, kMaxWait));
  Millis wait = interval;
  for (int i = 0; i < failures && wait < cap; ++i) wait *= 2;
  return std::min(wait, cap);
}

BackoffPolicy::Millis BackoffPolicy::Next(bool failed) {
  failures_ = failed ? failures_ + 1 : 0;
  return Delay(interval_, failures_);
}

}  // namespace seatwatch::cleanup
