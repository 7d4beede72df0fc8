// The heap in use, for uvbench's idle-connection measurement. mallinfo2 is glibc's (2.33 and
// later) and not in Swift's Glibc module, hence this shim.
#define _GNU_SOURCE
#include "CAllocCounter.h"

#include <malloc.h>

int64_t uvbench_heap_in_use(void) {
    // Hands memory freed at the top of each arena back first, so that the reading is of what is
    // allocated, not of what the arenas kept.
    malloc_trim(0);
    return (int64_t)mallinfo2().uordblks;
}
