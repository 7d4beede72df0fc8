// A counting malloc for uvbench. The functions below are defined in the executable, so the dynamic
// linker binds every library's malloc/free (libswiftCore, Foundation, libuv, ...) to them; they
// forward to glibc's own entry points (__libc_malloc and friends, which glibc exports for exactly
// this purpose) and count while enabled. Counting costs one relaxed load when disabled and a few
// relaxed atomic adds when enabled.
#define _GNU_SOURCE
#include "CAllocCounter.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void *__libc_valloc(size_t size);
extern void __libc_free(void *pointer);

static atomic_int counting;
static _Atomic int64_t allocations, reallocations, frees, bytes;

static inline void note_allocation(size_t size) {
    if (atomic_load_explicit(&counting, memory_order_relaxed)) {
        atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&bytes, (int64_t)size, memory_order_relaxed);
    }
}

void *malloc(size_t size) {
    note_allocation(size);
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    note_allocation(count * size);
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    if (pointer == NULL) {
        note_allocation(size);
    } else if (atomic_load_explicit(&counting, memory_order_relaxed)) {
        atomic_fetch_add_explicit(&reallocations, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&bytes, (int64_t)size, memory_order_relaxed);
    }
    return __libc_realloc(pointer, size);
}

void free(void *pointer) {
    if (pointer != NULL && atomic_load_explicit(&counting, memory_order_relaxed)) {
        atomic_fetch_add_explicit(&frees, 1, memory_order_relaxed);
    }
    __libc_free(pointer);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) return EINVAL;
    note_allocation(size);
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *result = pointer;
    return 0;
}

void *aligned_alloc(size_t alignment, size_t size) {
    note_allocation(size);
    return __libc_memalign(alignment, size);
}

void *memalign(size_t alignment, size_t size) {
    note_allocation(size);
    return __libc_memalign(alignment, size);
}

void *valloc(size_t size) {
    note_allocation(size);
    return __libc_valloc(size);
}

void uvbench_alloc_counter_reset(void) {
    atomic_store(&allocations, 0);
    atomic_store(&reallocations, 0);
    atomic_store(&frees, 0);
    atomic_store(&bytes, 0);
}

void uvbench_alloc_counter_enable(int enabled) {
    atomic_store(&counting, enabled ? 1 : 0);
}

uvbench_alloc_counts uvbench_alloc_counter_read(void) {
    uvbench_alloc_counts counts = {
        atomic_load(&allocations), atomic_load(&reallocations), atomic_load(&frees), atomic_load(&bytes),
    };
    return counts;
}
