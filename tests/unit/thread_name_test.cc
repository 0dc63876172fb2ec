#include "util/thread_name.h"

#include <fstream>
#include <string>
#include <thread>

#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace seatwatch {
namespace {

// What ps, top -H and bench/changes read: the kernel's comm of the task.
std::string KernelName() {
  std::ifstream comm("/proc/self/task/" + std::to_string(syscall(SYS_gettid)) + "/comm");
  std::string name;
  std::getline(comm, name);
  return name;
}

TEST(ThreadNameTest, NamesTheCallingThreadOnlyAsTheKernelShowsIt) {
  std::string main_before = KernelName();
  std::string inside, inside_kernel;
  std::thread worker([&] {
    thread_name::Set("sw-stream");
    inside = thread_name::Get();
    inside_kernel = KernelName();
  });
  worker.join();
  EXPECT_EQ(inside, "sw-stream");
  EXPECT_EQ(inside_kernel, "sw-stream");
  EXPECT_EQ(KernelName(), main_before);
}

TEST(ThreadNameTest, ALongNameIsCutAtFifteenBytesNotRefused) {
  std::string inside;
  std::thread worker([&] {
    thread_name::Set("sw-a-name-far-too-long-for-linux");
    inside = KernelName();
  });
  worker.join();
  EXPECT_EQ(inside, "sw-a-name-far-t");
}

}  // namespace
}  // namespace seatwatch
