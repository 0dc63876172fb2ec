#include "util/thread_name.h"

#include <pthread.h>

namespace seatwatch::thread_name {

namespace {
constexpr std::size_t kMaxBytes = 15;  // TASK_COMM_LEN less its NUL
}  // namespace

void Set(const std::string& name) {
  pthread_setname_np(pthread_self(), name.substr(0, kMaxBytes).c_str());
}

std::string Get() {
  char name[kMaxBytes + 1] = {};
  if (pthread_getname_np(pthread_self(), name, sizeof name) != 0) return "";
  return name;
}

}  // namespace seatwatch::thread_name
