#pragma once

#include <string>

namespace seatwatch::thread_name {

// Names the calling thread as `top -H`, `ps -L`, gdb and /proc/PID/task/*/comm
// show it, so that an operator (and bench/changes, which splits seatwatch's
// CPU by thread) can tell the poll lanes, the change feed's stream reader and
// the cleanup worker from CivetWeb's workers. Linux keeps 15 bytes of a name:
// a longer one is cut there. Naming is best effort: a failure changes nothing
// the daemon does, so it is not reported.
void Set(const std::string& name);

// The calling thread's name, as the kernel keeps it ("" if unreadable).
std::string Get();

}  // namespace seatwatch::thread_name
