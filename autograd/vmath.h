/* autograd/vmath.h - softplus, sigmoid and tanh of one float in branch-free arithmetic that GCC's
 * vectoriser turns into AVX2 (or SSE2) code inside a VS_VECTOR_CLONES loop: no libm calls (libm's
 * expf and log1pf are scalar calls the vectoriser must keep), no branches, selects only.  Both clones
 * and a plain scalar call run the same IEEE operations (the clones have no FMA), so they round
 * alike: one float in, the same bits out, on any ISA and thread count.
 *
 * exp is Cephes' expf (range reduction by n ln 2 in two parts, degree-6 polynomial) with 2^n applied
 * as two factors so results down to the smallest denormal round once; log1p(u) for u in [0, 1] is
 * Cephes' logf of 1 + u plus the correction (u - ((1 + u) - 1)) / (1 + u) for the rounding of 1 + u.
 * tests/test_vmath.c bounds the error against double precision over the whole float range. */
#ifndef VERSUS_AUTOGRAD_VMATH_H
#define VERSUS_AUTOGRAD_VMATH_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Always inlined: a call inside a vectorised loop would keep the loop scalar. */
#if defined(__GNUC__)
#define VS_VM_INLINE static inline __attribute__((always_inline))
#else
#define VS_VM_INLINE static inline
#endif

/* The bits of a float and back (memcpy is how C spells a bit cast; it compiles to nothing). */
VS_VM_INLINE uint32_t vs_vm_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

VS_VM_INLINE float vs_vm_float(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* e^a for a <= 0 that is not NaN (a < -104 gives 0, as e^a < 2^-150 does). */
VS_VM_INLINE float vs_vm_exp_nonpos(float a)
{
    const float magic = 12582912.0f; /* 1.5 * 2^23: t - magic is round(a log2 e) */
    a = a < -104.0f ? -104.0f : a;
    const float t = a * 1.44269504088896341f + magic, n = t - magic;
    const int32_t ni = (int32_t)(vs_vm_bits(t) - vs_vm_bits(magic)); /* n as an integer, in [-151, 0] */
    const float r = (a - n * 0.693359375f) - n * -2.12194440e-4f;  /* |r| <= ln 2 / 2 */
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    const float y = (p * (r * r) + r) + 1.0f;
    /* 2^n as 2^n1 2^n2 with n1, n2 >= -76: each factor a normal float, one rounding into denormals */
    const int32_t n1 = ni / 2, n2 = ni - n1;
    return y * vs_vm_float((uint32_t)(n1 + 127) << 23) * vs_vm_float((uint32_t)(n2 + 127) << 23);
}

/* log(1 + u) for u in [0, 1]. */
VS_VM_INLINE float vs_vm_log1p_unit(float u)
{
    const float y = 1.0f + u;
    const float c = (u - (y - 1.0f)) / y; /* what rounding 1 + u lost, relative to y */
    const uint32_t b = vs_vm_bits(y);
    /* y = 2^e m with m in [1, 2); m above sqrt 2 is halved, so f = m - 1 lies in [-0.293, 0.415) */
    const bool high = (b & 0x7fffffu) > 0x3504f3u;
    const float m = vs_vm_float((b & 0x7fffffu) | (high ? 0x3f000000u : 0x3f800000u));
    const float e = (float)((int32_t)(b >> 23) - 127 + (high ? 1 : 0));
    const float f = m - 1.0f, z = f * f;
    float p = 7.0376836292e-2f;
    p = p * f + -1.1514610310e-1f;
    p = p * f + 1.1676998740e-1f;
    p = p * f + -1.2420140846e-1f;
    p = p * f + 1.4249322787e-1f;
    p = p * f + -1.6668057665e-1f;
    p = p * f + 2.0000714765e-1f;
    p = p * f + -2.4999993993e-1f;
    p = p * f + 3.3333331174e-1f;
    float l = p * f * z;
    l += e * -2.12194440e-4f;
    l += -0.5f * z;
    l = f + l;
    l += e * 0.693359375f;
    return l + c;
}

/* -|x| (0 for NaN): the argument of the e^-|x| that softplus and sigmoid share. */
VS_VM_INLINE float vs_vm_neg_abs(float x)
{
    const float a = x != x ? 0.0f : x;
    return a > 0 ? -a : a;
}

/* softplus(x) from e = e^-|x|: max(x, 0) + log(1 + e); NaN stays NaN. */
VS_VM_INLINE float vs_vm_softplus_from(float x, float e)
{
    const bool nan = x != x;
    const float a = nan ? 0.0f : x, pos = a > 0 ? a : 0.0f;
    const float y = pos + vs_vm_log1p_unit(e);
    return nan ? x : y;
}

/* softplus(x) = log(1 + e^x) = max(x, 0) + log(1 + e^-|x|), without overflow; NaN stays NaN. */
VS_VM_INLINE float vs_softplusf(float x) { return vs_vm_softplus_from(x, vs_vm_exp_nonpos(vs_vm_neg_abs(x))); }

/* y[i] = vs_softplusf(x[i]) for i < n, the same operations on each element (so the same bits), in
 * blocks of VS_VM_BLOCK: e^-|x| of a block into a buffer, then max(x, 0) + log(1 + e).  In one loop
 * an element's exp and log are one chain of ~40 dependent operations and ~100 instructions, and the
 * out-of-order window holds only two or three elements' chains; split, it holds twice as many.
 * Measured on Zen 4 over 100k floats: AVX2 266 -> 173 us, AVX-512 151 -> 118 us. */
#define VS_VM_BLOCK 256
/* vs_softplus_rows that also leaves e^-|x[i]| in e[i] (n floats), for a later sigmoid of the same
 * x by vs_vm_sigmoid_from (BCE's backward). */
VS_VM_INLINE void vs_softplus_rows_keep(const float *restrict x, float *restrict y, float *restrict e, int64_t n)
{
    for (int64_t b = 0; b < n; b += VS_VM_BLOCK) {
        const int64_t m = n - b < VS_VM_BLOCK ? n - b : VS_VM_BLOCK;
        const float *restrict xb = x + b;
        float *restrict yb = y + b, *restrict eb = e + b;
        for (int64_t i = 0; i < m; i++) eb[i] = vs_vm_exp_nonpos(vs_vm_neg_abs(xb[i]));
        for (int64_t i = 0; i < m; i++) yb[i] = vs_vm_softplus_from(xb[i], eb[i]);
    }
}

VS_VM_INLINE void vs_softplus_rows(const float *restrict x, float *restrict y, int64_t n)
{
    float e[VS_VM_BLOCK];
    for (int64_t b = 0; b < n; b += VS_VM_BLOCK)
        vs_softplus_rows_keep(x + b, y + b, e, n - b < VS_VM_BLOCK ? n - b : VS_VM_BLOCK);
}

/* sigmoid(x) from e = e^-|x|: 1 / (1 + e) for x >= 0, e / (1 + e) below; NaN stays NaN. */
VS_VM_INLINE float vs_vm_sigmoid_from(float x, float e)
{
    const bool nan = x != x;
    const float a = nan ? 0.0f : x;
    const float y = (a >= 0 ? 1.0f : e) / (1.0f + e);
    return nan ? x : y;
}

/* sigmoid(x) = 1 / (1 + e^-x): 1 / (1 + e^-x) for x >= 0, e^x / (1 + e^x) below; NaN stays NaN. */
VS_VM_INLINE float vs_sigmoidf(float x) { return vs_vm_sigmoid_from(x, vs_vm_exp_nonpos(vs_vm_neg_abs(x))); }

/* tanh(x): tanh |x| with the sign of x put back (so -0 stays -0); tanh |x| is Cephes' odd
 * polynomial |x| + |x|^3 P(x^2) below 0.625, (1 - t) / (1 + t) with t = e^-2|x| above (no
 * cancellation there: t <= 0.287).  NaN stays NaN. */
VS_VM_INLINE float vs_tanhf(float x)
{
    const bool nan = x != x;
    const float a = nan ? 0.0f : x, ax = a > 0 ? a : -a, z = a * a;
    float p = -5.70498872745e-3f;
    p = p * z + 2.06390887954e-2f;
    p = p * z + -5.37397155531e-2f;
    p = p * z + 1.33314422036e-1f;
    p = p * z + -3.33332819422e-1f;
    const float t = vs_vm_exp_nonpos(-2.0f * ax);
    const float r = ax < 0.625f ? p * z * ax + ax : (1.0f - t) / (1.0f + t); /* tanh |x| */
    return nan ? x : vs_vm_float(vs_vm_bits(r) | (vs_vm_bits(a) & 0x80000000u));
}

#endif
