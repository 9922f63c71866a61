/* autograd/vec_loop.h - VS_VEC8, the loop shape that GCC's -O2 vectoriser accepts, for the flat maps
 * of the elementwise ops, the reductions and the optimizer updates.
 *
 * At -O2 GCC uses its "very cheap" cost model: it vectorises a loop only when the vector code
 * replaces all of it, i.e. when the trip count is a known multiple of the vector length.  A loop
 * over [0, n) therefore runs as blocks of 8 (a fixed-count inner loop: two SSE or one AVX vector)
 * plus a scalar tail.  Each element is computed exactly as the plain loop computes it (nothing is
 * reassociated), so results are bit-identical to it.  Pair with restrict pointers, loop-invariant
 * branches hoisted out, and VS_VECTOR_CLONES (autograd/kernels.h) on the enclosing function. */
#ifndef VERSUS_AUTOGRAD_VEC_LOOP_H
#define VERSUS_AUTOGRAD_VEC_LOOP_H

#include <stdint.h>

/* VS_VEC8(n, body using i): run body for every i in [0, n). */
#define VS_VEC8(n, ...)                                                                        \
    do {                                                                                       \
        int64_t b8_ = 0;                                                                       \
        for (; b8_ + 8 <= (n); b8_ += 8)                                                       \
            for (int64_t j8_ = 0; j8_ < 8; j8_++) {                                            \
                const int64_t i = b8_ + j8_;                                                   \
                __VA_ARGS__;                                                                   \
            }                                                                                  \
        for (int64_t i = b8_; i < (n); i++) { __VA_ARGS__; }                                   \
    } while (0)

#endif
