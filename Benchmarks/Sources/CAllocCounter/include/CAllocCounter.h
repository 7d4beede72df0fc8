#ifndef UVBENCH_ALLOC_COUNTER_H
#define UVBENCH_ALLOC_COUNTER_H

#include <stdint.h>

/// Counts of malloc-family calls made by any thread of this process while counting was enabled.
typedef struct {
    int64_t allocations;   // malloc, calloc, realloc(NULL, n), posix_memalign, aligned_alloc, memalign, valloc
    int64_t reallocations; // realloc of an existing block
    int64_t frees;         // free of a non-NULL pointer
    int64_t bytes;         // bytes requested by the allocations and reallocations
} uvbench_alloc_counts;

void uvbench_alloc_counter_reset(void);
void uvbench_alloc_counter_enable(int enabled);
uvbench_alloc_counts uvbench_alloc_counter_read(void);

/// Bytes of heap in use in every malloc arena (glibc's mallinfo2), after a malloc_trim.
int64_t uvbench_heap_in_use(void);

#endif
