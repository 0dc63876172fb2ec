#include "util/heap.h"

#include <malloc.h>

namespace seatwatch::heap {

namespace {

constexpr int kArenas = 2;
constexpr int kMmapThresholdBytes = 128 * 1024;

}  // namespace

void ConfigureForDaemon() {
  mallopt(M_ARENA_MAX, kArenas);
  // Setting either threshold also turns off glibc's raising of them.
  mallopt(M_MMAP_THRESHOLD, kMmapThresholdBytes);
  mallopt(M_TRIM_THRESHOLD, kMmapThresholdBytes);
}

void ReleaseFreePages() { malloc_trim(0); }

}  // namespace seatwatch::heap
