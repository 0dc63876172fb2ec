#pragma once

namespace seatwatch::heap {

// The daemon's malloc policy, set once at start before any thread exists.
//
// A poll at 5M seats builds tens of megabytes that live for one poll (the
// result rows, the series, the rendered text) and then a few that stay. With
// glibc's defaults each of the daemon's threads may get its own arena, and
// the mmap threshold rises after the first large free until multi-megabyte
// buffers come from the heap, where the blocks still in use around them keep
// their pages from ever being returned: the resident size ratchets up to the
// largest poll seen and stays. So: two arenas, and every block of 128 KiB or
// more mapped on its own and unmapped when freed.
void ConfigureForDaemon();

// Gives the pages of free heap memory back to the kernel (malloc_trim). Cheap
// next to a poll; called after each one.
void ReleaseFreePages();

}  // namespace seatwatch::heap
