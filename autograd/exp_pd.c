/* exp_pd.c - e^x for arrays of doubles, vectorised, with the same bits on every instruction set.
 *
 * softmax, log_softmax and logsumexp sum e^(x - max) in double (ops_reduce.c); glibc's scalar exp
 * took 14 of the 15 us of a log_softmax over 256 x 10 logits.  Here, for every x:
 *   k = round(x log2 e),  r = (x - k ln2_hi) - k ln2_lo  (two FMAs; |r| <= ln2 / 2)
 *   e^r = sum_{i <= 13} r^i / i!  by Horner's rule in FMAs (truncation < 5e-18 relative)
 *   e^x = (e^r 2^(k-1)) 2  (two exact scalings, so k = 1024 still fits)
 * One loop of C99 (fma, nearbyint), compiled for AVX-512, for AVX2 and for the baseline: the same
 * roundings in the same order, so the result does not depend on the machine; within 2 ulps of e^x
 * (tests/test_exp_pd.c measures it against long double).  x < -708 gives 0 (e^x < 2^-1021 there:
 * below a double's normal range, and 0 in float), x > 709.78 gives +inf, NaN gives NaN. */
#include "autograd/kernels.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define EXP_LO (-708.0)
#define EXP_HI 709.782712893384 /* ln(DBL_MAX) */
#define LOG2E 0x1.71547652b82fep+0
#define LN2_HI 0x1.62e42fefa39efp-1
#define LN2_LO 0x1.abc9e3b39803fp-56

/* 1 / i! for i = 13 down to 0 (Horner's order). */
static const double COEF[14] = {
    0x1.6124613a86d09p-33, 0x1.1eed8eff8d898p-29, 0x1.ae64567f544e4p-26, 0x1.27e4fb7789f5cp-22,
    0x1.71de3a556c734p-19, 0x1.a01a01a01a01ap-16, 0x1.a01a01a01a01ap-13, 0x1.6c16c16c16c17p-10,
    0x1.1111111111111p-7,  0x1.5555555555555p-5,  0x1.5555555555555p-3,  0x1.0000000000000p-1,
    0x1.0000000000000p+0,  0x1.0000000000000p+0,
};

/* e^x as described above, written for the vectoriser: the range checks as selects, nearbyint and
 * fma as the ISA's rounding and fused multiply-add instructions once a loop below is compiled for
 * it, 2^(k-1) built from k's bits by adding 1.5 2^52 (k then sits in the low bits). */
__attribute__((always_inline)) static inline double exp_core(double x)
{
    const double xc = x < EXP_LO ? EXP_LO : x > EXP_HI ? EXP_HI : x;
    const double k = nearbyint(xc * LOG2E);
    double r = fma(-k, LN2_HI, xc);
    r = fma(-k, LN2_LO, r);
    double p = COEF[0];
#pragma GCC unroll 14
    for (int i = 1; i < 14; i++) p = fma(p, r, COEF[i]);
    const double kb = k + 0x1.8p52;
    uint64_t bits;
    memcpy(&bits, &kb, sizeof bits);
    bits = (bits + 1022) << 52; /* 2^(k-1) */
    double scale;
    memcpy(&scale, &bits, sizeof scale);
    const double e = p * scale * 2.0;
    return x != x ? x : x < EXP_LO ? 0.0 : x > EXP_HI ? INFINITY : e;
}

/* The same loop compiled for each instruction set: the same operations, so the same bits. */
#define EXP_LOOP(x, y, n)                                                                        \
    for (int64_t i = 0; i < (n); i++) (y)[i] = exp_core((x)[i])

VS_SELECTS static void exp_plain(const double *x, double *y, int64_t n) { EXP_LOOP(x, y, n); }

#if defined(__x86_64__) || defined(__i386__)
VS_SELECTS __attribute__((target("avx512f,fma"))) static void exp_avx512(const double *x, double *y, int64_t n)
{
    EXP_LOOP(x, y, n);
}
VS_SELECTS __attribute__((target("avx2,fma"))) static void exp_avx2(const double *x, double *y, int64_t n)
{
    EXP_LOOP(x, y, n);
}
#endif

void vs_exp_pd(const double *x, double *y, int64_t n)
{
#if defined(__x86_64__) || defined(__i386__)
    switch (vs_kernel_isa()) {
    case VS_ISA_AVX512: exp_avx512(x, y, n); return;
    case VS_ISA_AVX2: exp_avx2(x, y, n); return;
    default: break;
    }
#endif
    exp_plain(x, y, n);
}
