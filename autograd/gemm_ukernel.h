/* autograd/gemm_ukernel.h - the SIMD SGEMM micro-kernel, written once and instantiated per
 * instruction set (no include guard: gemm_avx2.c and gemm_avx512.c each include it once).
 *
 * The includer defines:
 *   UK_NAME, UK_NAME_PACKED  names of the in-place and packed-operand kernels
 *   UK_TARGET   function attribute enabling the ISA
 *   UK_V        vector type               UK_VL      floats per vector
 *   UK_LOAD(p)  unaligned load            UK_STORE(p, v)  unaligned store
 *   UK_BCAST(p) all lanes = *p            UK_SET1(x) all lanes = x
 *   UK_ZERO()   zero vector               UK_FMA(a, b, c) a*b + c rounded once
 *   UK_MUL(a, b)
 * and, when its ISA stores under a lane mask cheaply (AVX-512's k registers; AVX2's vmaskmovps is
 * slow on older AMD cores), UK_MASK_T the mask type, UK_MASK(n) the first n lanes (0 <= n <= VL),
 * UK_LOAD_MASK(p, m) loading zero in the other lanes without touching their memory, and
 * UK_STORE_MASK(p, m, v): partial tiles are then written in place instead of through a staging tile.
 *
 * Tile: 6 rows x 2 vectors of C held in 12 accumulators.  Per k: two vector loads of B, six
 * broadcasts of A, twelve FMAs - enough independent chains to cover FMA latency on two pipes.
 * With AVX2 (16 registers) that is 12 + 2 + 1 registers; the AVX-512 instance is the same shape
 * twice as wide (6 x 32). */

#define UK_MR 6
#define UK_NR (2 * UK_VL)

/* One k step: broadcast A(i,k) for the six rows (addresses p0..p5), multiply-add into both
 * vectors of each row; bk points at B(k, 0..NR). */
#define UK_STEP(p0, p1, p2, p3, p4, p5, bk)                                                      \
    do {                                                                                         \
        const UK_V b0 = UK_LOAD(bk), b1 = UK_LOAD((bk) + UK_VL);                                 \
        UK_V x;                                                                                  \
        x = UK_BCAST(p0); c00 = UK_FMA(x, b0, c00); c01 = UK_FMA(x, b1, c01);                    \
        x = UK_BCAST(p1); c10 = UK_FMA(x, b0, c10); c11 = UK_FMA(x, b1, c11);                    \
        x = UK_BCAST(p2); c20 = UK_FMA(x, b0, c20); c21 = UK_FMA(x, b1, c21);                    \
        x = UK_BCAST(p3); c30 = UK_FMA(x, b0, c30); c31 = UK_FMA(x, b1, c31);                    \
        x = UK_BCAST(p4); c40 = UK_FMA(x, b0, c40); c41 = UK_FMA(x, b1, c41);                    \
        x = UK_BCAST(p5); c50 = UK_FMA(x, b0, c50); c51 = UK_FMA(x, b1, c51);                    \
    } while (0)

/* Where the ISA multiplies by a value broadcast from memory inside the FMA (AVX-512's {1to16}),
 * the includer defines UK_FMA_BCAST(p, b, c) = *p b + c, and the step uses it instead of a separate
 * broadcast per row: the same products and sums, one instruction fewer per FMA pair. */
#ifdef UK_FMA_BCAST
#undef UK_STEP
#define UK_STEP(p0, p1, p2, p3, p4, p5, bk)                                                      \
    do {                                                                                         \
        const UK_V b0 = UK_LOAD(bk), b1 = UK_LOAD((bk) + UK_VL);                                 \
        c00 = UK_FMA_BCAST(p0, b0, c00); c01 = UK_FMA_BCAST(p0, b1, c01);                        \
        c10 = UK_FMA_BCAST(p1, b0, c10); c11 = UK_FMA_BCAST(p1, b1, c11);                        \
        c20 = UK_FMA_BCAST(p2, b0, c20); c21 = UK_FMA_BCAST(p2, b1, c21);                        \
        c30 = UK_FMA_BCAST(p3, b0, c30); c31 = UK_FMA_BCAST(p3, b1, c31);                        \
        c40 = UK_FMA_BCAST(p4, b0, c40); c41 = UK_FMA_BCAST(p4, b1, c41);                        \
        c50 = UK_FMA_BCAST(p5, b0, c50); c51 = UK_FMA_BCAST(p5, b1, c51);                        \
    } while (0)
#endif

/* The same step for a tile at most one vector wide (nr <= VL): half the FMAs; the first column
 * vector of every row gets exactly the operations it gets in UK_STEP, so it rounds alike. */
#define UK_STEP_HALF(p0, p1, p2, p3, p4, p5, bk)                                                 \
    do {                                                                                         \
        const UK_V b0 = UK_LOAD(bk);                                                             \
        c00 = UK_FMA(UK_BCAST(p0), b0, c00);                                                     \
        c10 = UK_FMA(UK_BCAST(p1), b0, c10);                                                     \
        c20 = UK_FMA(UK_BCAST(p2), b0, c20);                                                     \
        c30 = UK_FMA(UK_BCAST(p3), b0, c30);                                                     \
        c40 = UK_FMA(UK_BCAST(p4), b0, c40);                                                     \
        c50 = UK_FMA(UK_BCAST(p5), b0, c50);                                                     \
    } while (0)

/* Where a narrower vector's FMA costs less than the full one's (AVX-512 on cores that run a zmm FMA
 * as two ymm halves, Zen 4), the includer defines UK_NARROW_V, UK_NARROW_VL, UK_NARROW_LOAD,
 * UK_NARROW_BCAST, UK_NARROW_FMA and UK_WIDEN (narrow -> full vector, upper lanes zero), and a tile
 * at most UK_NARROW_VL wide runs its k loop on narrow vectors: the sliver of 8 columns at the end of
 * a 200-wide C costs half a full-width step.  Each lane gets the operations UK_STEP_HALF gives it,
 * and the accumulators are widened before the common write-back, so the bits do not change. */
#ifdef UK_NARROW_V
#define UK_NARROW_LOOP(step_a, a_next, b_next)                                                   \
    do {                                                                                         \
        UK_NARROW_V n0 = UK_NARROW_ZERO(), n1 = UK_NARROW_ZERO(), n2 = UK_NARROW_ZERO();         \
        UK_NARROW_V n3 = UK_NARROW_ZERO(), n4 = UK_NARROW_ZERO(), n5 = UK_NARROW_ZERO();         \
        int64_t ka = 0; /* k times A's column stride, for kernels reading A in place */          \
        (void)ka;                                                                                \
        _Pragma("GCC unroll 4") for (int64_t k = 0; k < kc; k++, a_next, b_next)                 \
        {                                                                                        \
            const UK_NARROW_V b0 = UK_NARROW_LOAD(b);                                            \
            n0 = UK_NARROW_FMA(UK_NARROW_BCAST(step_a(0)), b0, n0);                              \
            n1 = UK_NARROW_FMA(UK_NARROW_BCAST(step_a(1)), b0, n1);                              \
            n2 = UK_NARROW_FMA(UK_NARROW_BCAST(step_a(2)), b0, n2);                              \
            n3 = UK_NARROW_FMA(UK_NARROW_BCAST(step_a(3)), b0, n3);                              \
            n4 = UK_NARROW_FMA(UK_NARROW_BCAST(step_a(4)), b0, n4);                              \
            n5 = UK_NARROW_FMA(UK_NARROW_BCAST(step_a(5)), b0, n5);                              \
        }                                                                                        \
        c00 = UK_WIDEN(n0), c10 = UK_WIDEN(n1), c20 = UK_WIDEN(n2);                              \
        c30 = UK_WIDEN(n3), c40 = UK_WIDEN(n4), c50 = UK_WIDEN(n5);                              \
    } while (0)
#define UK_NARROW_FITS(nr) ((nr) <= UK_NARROW_VL)
#else
#define UK_NARROW_LOOP(step_a, a_next, b_next) ((void)0)
#define UK_NARROW_FITS(nr) 0
#endif

/* Ask for the C tile now, so the write-back after the k loop finds it in L1 instead of waiting on
 * L3 or memory (C is touched once per pass and is usually too big to stay cached). */
#define UK_PREFETCH_C()                                                                          \
    do {                                                                                         \
        if (csc == 1)                                                                            \
            for (int64_t i = 0; i < mr; i++) {                                                   \
                __builtin_prefetch(c + i * rsc, 1, 3);                                           \
                __builtin_prefetch(c + i * rsc + UK_NR - 1, 1, 3);                               \
            }                                                                                    \
    } while (0)

/* The twelve accumulators.  alpha, beta and bias are parked in memory first: otherwise the
 * register allocator may keep them in registers through the k loop and spill an accumulator or a
 * row pointer (a 64 x 10 x 256 x W^T: 8% slower). */
#define UK_ACCUMULATORS                                                                          \
    __asm__("" : "+m"(alpha), "+m"(beta), "+m"(bias));                                           \
    UK_V c00 = UK_ZERO(), c01 = UK_ZERO(), c10 = UK_ZERO(), c11 = UK_ZERO();                     \
    UK_V c20 = UK_ZERO(), c21 = UK_ZERO(), c30 = UK_ZERO(), c31 = UK_ZERO();                     \
    UK_V c40 = UK_ZERO(), c41 = UK_ZERO(), c50 = UK_ZERO(), c51 = UK_ZERO()

/* Row of the tile at p: p = alpha acc (beta == 0) or alpha acc + beta q, q the row's source (p
 * itself, or the bias row).  The same expression serves C and the staging tile of partial tiles,
 * so both round alike. */
#define UK_ROW(p, q, acc0, acc1)                                                                 \
    do {                                                                                         \
        UK_V r0 = UK_MUL(va, acc0), r1 = UK_MUL(va, acc1);                                       \
        if (beta != 0) {                                                                         \
            r0 = UK_FMA(vb, UK_LOAD(q), r0);                                                     \
            r1 = UK_FMA(vb, UK_LOAD((q) + UK_VL), r1);                                           \
        }                                                                                        \
        UK_STORE(p, r0);                                                                         \
        UK_STORE((p) + UK_VL, r1);                                                               \
    } while (0)

/* Rows of the tile at p (row stride ld) from the sources at q (row stride ldq). */
#define UK_TILE(p, ld, q, ldq)                                                                   \
    do {                                                                                         \
        UK_ROW((p), (q), c00, c01);                                                              \
        UK_ROW((p) + (ld), (q) + (ldq), c10, c11);                                               \
        UK_ROW((p) + 2 * (ld), (q) + 2 * (ldq), c20, c21);                                       \
        UK_ROW((p) + 3 * (ld), (q) + 3 * (ldq), c30, c31);                                       \
        UK_ROW((p) + 4 * (ld), (q) + 4 * (ldq), c40, c41);                                       \
        UK_ROW((p) + 5 * (ld), (q) + 5 * (ldq), c50, c51);                                       \
    } while (0)

#ifdef UK_MASK_T
/* Row of a partial tile at p: the first nr columns, by UK_ROW's arithmetic under masks m0, m1. */
#define UK_ROW_MASKED(p, q, acc0, acc1)                                                          \
    do {                                                                                         \
        UK_V r0 = UK_MUL(va, acc0), r1 = UK_MUL(va, acc1);                                       \
        if (beta != 0) {                                                                         \
            r0 = UK_FMA(vb, UK_LOAD_MASK(q, m0), r0);                                            \
            r1 = UK_FMA(vb, UK_LOAD_MASK((q) + UK_VL, m1), r1);                                  \
        }                                                                                        \
        UK_STORE_MASK(p, m0, r0);                                                                \
        UK_STORE_MASK((p) + UK_VL, m1, r1);                                                      \
    } while (0)
/* Rows past mr are not written. */
#define UK_PARTIAL_TILE()                                                                        \
    do {                                                                                         \
        const UK_MASK_T m0 = UK_MASK(nr < UK_VL ? nr : UK_VL), m1 = UK_MASK(nr > UK_VL ? nr - UK_VL : 0); \
        UK_ROW_MASKED(c, src, c00, c01);                                                         \
        if (mr > 1) UK_ROW_MASKED(c + rsc, src + rss, c10, c11);                                 \
        if (mr > 2) UK_ROW_MASKED(c + 2 * rsc, src + 2 * rss, c20, c21);                         \
        if (mr > 3) UK_ROW_MASKED(c + 3 * rsc, src + 3 * rss, c30, c31);                         \
        if (mr > 4) UK_ROW_MASKED(c + 4 * rsc, src + 4 * rss, c40, c41);                         \
        if (mr > 5) UK_ROW_MASKED(c + 5 * rsc, src + 5 * rss, c50, c51);                         \
    } while (0)
#define UK_MASKED 1
#else
#define UK_PARTIAL_TILE() ((void)0)
#define UK_MASKED 0
#endif

/* Write the accumulators to the mr x nr tile at c, adding beta C or, given a bias row (beta then
 * counts as 1), the bias: C = alpha acc + bias as C = alpha acc + 1 C with C holding the bias would
 * give, without the copy.  Partial tiles are written under masks where the ISA has them, else (and
 * strided tiles always) through a full staging tile, so they round exactly like full ones. */
#define UK_WRITE_BACK()                                                                          \
    do {                                                                                         \
        if (bias) beta = 1.0f;                                                                   \
        const UK_V va = UK_SET1(alpha), vb = UK_SET1(beta);                                      \
        const float *src = bias ? bias : c;                                                      \
        const int64_t rss = bias ? 0 : rsc;                                                      \
        if (mr == UK_MR && nr == UK_NR && csc == 1) {                                            \
            UK_TILE(c, rsc, src, rss);                                                           \
        } else if (UK_MASKED && csc == 1) {                                                      \
            UK_PARTIAL_TILE();                                                                   \
        } else {                                                                                 \
            float t[UK_MR * UK_NR];                                                              \
            memset(t, 0, sizeof t);                                                              \
            if (beta != 0)                                                                       \
                for (int64_t i = 0; i < mr; i++)                                                 \
                    for (int64_t j = 0; j < nr; j++) t[i * UK_NR + j] = bias ? bias[j] : c[i * rsc + j * csc]; \
            UK_TILE(t, UK_NR, t, UK_NR);                                                         \
            for (int64_t i = 0; i < mr; i++)                                                     \
                for (int64_t j = 0; j < nr; j++) c[i * rsc + j * csc] = t[i * UK_NR + j];        \
        }                                                                                        \
    } while (0)

/* Operands read in place: A(i,k) = a[i*rsa + k*csa], B(k,j) = b[k*rsb + j]. */
UK_TARGET static void UK_NAME(int64_t kc, const float *a, int64_t rsa, int64_t csa, const float *b,
                              int64_t rsb, float *c, int64_t rsc, int64_t csc, int64_t mr, int64_t nr,
                              float alpha, float beta, const float *bias)
{
    /* Rows past mr re-read row 0 (always valid memory); their sums are thrown away. */
    const float *a0 = a;
    const float *a1 = a + (mr > 1 ? 1 : 0) * rsa;
    const float *a2 = a + (mr > 2 ? 2 : 0) * rsa;
    const float *a3 = a + (mr > 3 ? 3 : 0) * rsa;
    const float *a4 = a + (mr > 4 ? 4 : 0) * rsa;
    const float *a5 = a + (mr > 5 ? 5 : 0) * rsa;
    UK_PREFETCH_C();
    UK_ACCUMULATORS;
#define UK_A_IN_PLACE(r) (a##r + ka)
    if (UK_NARROW_FITS(nr)) {
        UK_NARROW_LOOP(UK_A_IN_PLACE, ka += csa, b += rsb);
    } else if (nr <= UK_VL) {
#pragma GCC unroll 4
        for (int64_t k = 0, ka = 0; k < kc; k++, ka += csa, b += rsb)
            UK_STEP_HALF(a0 + ka, a1 + ka, a2 + ka, a3 + ka, a4 + ka, a5 + ka, b);
    } else {
#pragma GCC unroll 4
        for (int64_t k = 0, ka = 0; k < kc; k++, ka += csa, b += rsb)
            UK_STEP(a0 + ka, a1 + ka, a2 + ka, a3 + ka, a4 + ka, a5 + ka, b);
    }
    UK_WRITE_BACK();
}

/* Packed operands: A(i,k) = a[k*MR + i], B(k,j) = b[k*NR + j].  Same steps as above in the same
 * order, so packing never changes a result; constant strides leave registers for unrolling. */
UK_TARGET static void UK_NAME_PACKED(int64_t kc, const float *a, int64_t rsa, int64_t csa, const float *b,
                                     int64_t rsb, float *c, int64_t rsc, int64_t csc, int64_t mr,
                                     int64_t nr, float alpha, float beta, const float *bias)
{
    (void)rsa;
    (void)csa;
    (void)rsb;
    UK_PREFETCH_C();
    UK_ACCUMULATORS;
#define UK_A_PACKED(r) (a + r)
    if (UK_NARROW_FITS(nr)) {
        UK_NARROW_LOOP(UK_A_PACKED, a += UK_MR, b += UK_NR);
    } else if (nr <= UK_VL) {
#pragma GCC unroll 4
        for (int64_t k = 0; k < kc; k++, a += UK_MR, b += UK_NR) UK_STEP_HALF(a + 0, a + 1, a + 2, a + 3, a + 4, a + 5, b);
    } else {
#pragma GCC unroll 4
        for (int64_t k = 0; k < kc; k++, a += UK_MR, b += UK_NR) UK_STEP(a + 0, a + 1, a + 2, a + 3, a + 4, a + 5, b);
    }
    UK_WRITE_BACK();
}

#undef UK_STEP
#undef UK_STEP_HALF
#undef UK_ACCUMULATORS
#undef UK_PREFETCH_C
#undef UK_ROW
#undef UK_TILE
#undef UK_WRITE_BACK
#undef UK_ROW_MASKED
#undef UK_PARTIAL_TILE
#undef UK_MASKED
