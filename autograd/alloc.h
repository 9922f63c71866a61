/* autograd/alloc.h - the engine's allocation functions and the test hook that makes one of them fail.
 *
 * Every allocation the engine makes (tensor storage and shells, graph nodes, scope lists, op data,
 * kernel scratch) goes through these, so a test can make the nth of them fail and check that the
 * failure surfaces as VS_ERR_NOMEM rather than as a wrong result.  Not installed; the tests link the
 * hook (it is exported with the vs_ symbols).  Memory from them is freed with free(). */
#ifndef VERSUS_AUTOGRAD_ALLOC_H
#define VERSUS_AUTOGRAD_ALLOC_H

#include <stddef.h>
#include <stdint.h>

void *vs_malloc(size_t bytes);
void *vs_calloc(size_t n, size_t size);
void *vs_realloc(void *p, size_t bytes);
/* bytes a multiple of align; on Linux, blocks of 1 MiB or more are 2 MiB-aligned huge-page blocks */
void *vs_aligned_alloc(size_t align, size_t bytes);

/* Test hook: the nth engine allocation from now (1 = the next one) fails, once; 0 disarms.  The
 * count is process-wide (every thread), so tests pin the pool to one thread.  Returns the number
 * of allocations that were still to go before the call (0 when none was armed). */
int64_t vs_fault_alloc_at(int64_t nth);
/* Allocations still to go before the armed one fails (0: not armed, or it has already failed).
 * Arming a large n, running code and reading this counts the allocations that code makes. */
int64_t vs_fault_alloc_left(void);

#endif
