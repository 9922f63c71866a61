/* alloc.c - the engine's allocation functions with their fault-injection countdown (alloc.h). */
#include "autograd/alloc.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

/* Allocations to go before the one that fails; 0 = off.  Read relaxed: when the hook is off this
 * is one load per allocation. */
static atomic_llong fail_in;

/* Does this allocation fail?  Counts it down when armed. */
static bool injected(void)
{
    if (atomic_load_explicit(&fail_in, memory_order_relaxed) <= 0) return false;
    long long left = atomic_fetch_sub(&fail_in, 1);
    if (left == 1) return true;
    if (left <= 0) atomic_store(&fail_in, 0); /* disarmed meanwhile: undo the step below zero */
    return false;
}

void *vs_malloc(size_t bytes) { return injected() ? NULL : malloc(bytes); }

void *vs_calloc(size_t n, size_t size) { return injected() ? NULL : calloc(n, size); }

void *vs_realloc(void *p, size_t bytes) { return injected() ? NULL : realloc(p, bytes); }

void *vs_aligned_alloc(size_t align, size_t bytes) { return injected() ? NULL : aligned_alloc(align, bytes); }

int64_t vs_fault_alloc_at(int64_t nth) { return (int64_t)atomic_exchange(&fail_in, nth > 0 ? nth : 0); }

int64_t vs_fault_alloc_left(void) { return (int64_t)atomic_load(&fail_in); }
