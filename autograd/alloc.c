/* alloc.c - the engine's allocation functions with their fault-injection countdown (alloc.h). */
#include "autograd/alloc.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
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

/* Blocks of HUGE_MIN bytes or more (a layer's weights, their gradients and Adam moments, large
 * activations and scratch) start on a 2 MiB boundary, are rounded up to whole 2 MiB pages and are
 * advised to Linux as transparent huge pages, which it gives only to advised memory when THP is
 * set to "madvise" (Debian's default).  The loops that stream through such blocks then miss the
 * TLB once per 2 MiB instead of once per 4 KiB: measured at 1 thread (Zen 4) in the training steps,
 * the Adam update over DIP-VAE's 2.4 M parameters (p, g, m, v: 38 MB) 1.77 -> 1.3 ms, over the VAE's
 * 0.65 M 0.37 -> 0.27 ms.  The rounding costs resident memory (DIP-VAE step 44 -> 48 MB, GANMEX
 * 43 -> 54 MB).  The advice is a hint: where it fails the block is an ordinary one. */
#if defined(__linux__)
/* Linux's madvise and MADV_HUGEPAGE (14 in its asm-generic numbering): our build's
 * _POSIX_C_SOURCE, set before any header (vs_exports.h comes first), hides both. */
int madvise(void *addr, size_t length, int advice);
#define HUGE_ADVICE 14                               /* MADV_HUGEPAGE */
#endif
#define HUGE_PAGE ((size_t)2 << 20)
#define HUGE_MIN ((size_t)1 << 20)

void *vs_aligned_alloc(size_t align, size_t bytes)
{
    if (injected()) return NULL;
#ifdef HUGE_ADVICE
    if (bytes >= HUGE_MIN && align <= HUGE_PAGE && bytes <= SIZE_MAX - HUGE_PAGE) {
        const size_t rounded = (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
        void *p = aligned_alloc(HUGE_PAGE, rounded);
        if (p) (void)madvise(p, rounded, HUGE_ADVICE);
        return p;
    }
#endif
    return aligned_alloc(align, bytes);
}

int64_t vs_fault_alloc_at(int64_t nth) { return (int64_t)atomic_exchange(&fail_in, nth > 0 ? nth : 0); }

int64_t vs_fault_alloc_left(void) { return (int64_t)atomic_load(&fail_in); }
