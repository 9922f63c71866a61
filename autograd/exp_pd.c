/* exp_pd.c - e^x for arrays of doubles, vectorised, with the same bits on every instruction set.
 *
 * softmax, log_softmax and logsumexp sum e^(x - max) in double (ops_reduce.c); glibc's scalar exp
 * took 14 of the 15 us of a log_softmax over 256 x 10 logits.  Here, for every x:
 *   k = round(x log2 e),  r = (x - k ln2_hi) - k ln2_lo  (two FMAs; |r| <= ln2 / 2)
 *   e^r = sum_{i <= 13} r^i / i!  by Horner's rule in FMAs (truncation < 5e-18 relative)
 *   e^x = (e^r 2^(k-1)) 2  (two exact scalings, so k = 1024 still fits)
 * The AVX-512 and AVX2 loops and the scalar one (C99 fma and nearbyint) perform the same roundings
 * in the same order, so the result does not depend on the machine; it is within 2 ulps of e^x
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

static double exp_one(double x)
{
    if (isnan(x)) return x;
    if (x < EXP_LO) return 0.0;
    if (x > EXP_HI) return INFINITY;
    const double k = nearbyint(x * LOG2E);
    double r = fma(-k, LN2_HI, x);
    r = fma(-k, LN2_LO, r);
    double p = COEF[0];
    for (int i = 1; i < 14; i++) p = fma(p, r, COEF[i]);
    const uint64_t bits = (uint64_t)((int64_t)k + 1022) << 52; /* 2^(k-1) */
    double scale;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale * 2.0;
}

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

__attribute__((target("avx512f,fma"))) static inline __m512d exp8(__m512d v)
{
    const __m512d xc = _mm512_max_pd(_mm512_min_pd(v, _mm512_set1_pd(EXP_HI)), _mm512_set1_pd(EXP_LO));
    const __m512d k = _mm512_roundscale_pd(_mm512_mul_pd(xc, _mm512_set1_pd(LOG2E)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512d r = _mm512_fnmadd_pd(k, _mm512_set1_pd(LN2_HI), xc);
    r = _mm512_fnmadd_pd(k, _mm512_set1_pd(LN2_LO), r);
    __m512d p = _mm512_set1_pd(COEF[0]);
    for (int c = 1; c < 14; c++) p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(COEF[c]));
    const __m512i ki = _mm512_cvtepi32_epi64(_mm512_cvtpd_epi32(k));
    const __m512d scale = _mm512_castsi512_pd(_mm512_slli_epi64(_mm512_add_epi64(ki, _mm512_set1_epi64(1022)), 52));
    __m512d e = _mm512_mul_pd(_mm512_mul_pd(p, scale), _mm512_set1_pd(2.0));
    e = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(v, _mm512_set1_pd(EXP_LO), _CMP_LT_OQ), e, _mm512_setzero_pd());
    e = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(v, _mm512_set1_pd(EXP_HI), _CMP_GT_OQ), e, _mm512_set1_pd(INFINITY));
    return _mm512_mask_blend_pd(_mm512_cmp_pd_mask(v, v, _CMP_UNORD_Q), e, v);
}

/* The tail under a mask: the same lanes' arithmetic, no scalar calls. */
__attribute__((target("avx512f,fma"))) static void exp_avx512(const double *x, double *y, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm512_storeu_pd(y + i, exp8(_mm512_loadu_pd(x + i)));
    if (i < n) {
        const __mmask8 m = (__mmask8)((1u << (n - i)) - 1u);
        _mm512_mask_storeu_pd(y + i, m, exp8(_mm512_maskz_loadu_pd(m, x + i)));
    }
}

__attribute__((target("avx2,fma"))) static inline __m256d exp4(__m256d v)
{
    const __m256d xc = _mm256_max_pd(_mm256_min_pd(v, _mm256_set1_pd(EXP_HI)), _mm256_set1_pd(EXP_LO));
    const __m256d k = _mm256_round_pd(_mm256_mul_pd(xc, _mm256_set1_pd(LOG2E)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256d r = _mm256_fnmadd_pd(k, _mm256_set1_pd(LN2_HI), xc);
    r = _mm256_fnmadd_pd(k, _mm256_set1_pd(LN2_LO), r);
    __m256d p = _mm256_set1_pd(COEF[0]);
    for (int c = 1; c < 14; c++) p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(COEF[c]));
    const __m256i ki = _mm256_cvtepi32_epi64(_mm256_cvtpd_epi32(k));
    const __m256d scale = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_add_epi64(ki, _mm256_set1_epi64x(1022)), 52));
    __m256d e = _mm256_mul_pd(_mm256_mul_pd(p, scale), _mm256_set1_pd(2.0));
    e = _mm256_blendv_pd(e, _mm256_setzero_pd(), _mm256_cmp_pd(v, _mm256_set1_pd(EXP_LO), _CMP_LT_OQ));
    e = _mm256_blendv_pd(e, _mm256_set1_pd(INFINITY), _mm256_cmp_pd(v, _mm256_set1_pd(EXP_HI), _CMP_GT_OQ));
    return _mm256_blendv_pd(e, v, _mm256_cmp_pd(v, v, _CMP_UNORD_Q));
}

/* The tail through a 4-element copy: the same lanes' arithmetic, no scalar calls. */
__attribute__((target("avx2,fma"))) static void exp_avx2(const double *x, double *y, int64_t n)
{
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) _mm256_storeu_pd(y + i, exp4(_mm256_loadu_pd(x + i)));
    if (i < n) {
        double t[4] = {0, 0, 0, 0};
        memcpy(t, x + i, (size_t)(n - i) * sizeof *t);
        _mm256_storeu_pd(t, exp4(_mm256_loadu_pd(t)));
        memcpy(y + i, t, (size_t)(n - i) * sizeof *t);
    }
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
    for (int64_t i = 0; i < n; i++) y[i] = exp_one(x[i]);
}
