/* rng.c - xoshiro256** (Blackman & Vigna) seeded with splitmix64; bulk uniform and normal draws. */
#include "versus/rng.h"
#include "autograd/kernels.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void vs_rng_seed(vs_rng *r, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
}

/* One xoshiro256** step: inlined into vs_rng_u64 and the bulk fill. */
static inline uint64_t next_u64(uint64_t *s)
{
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

uint64_t vs_rng_u64(vs_rng *r) { return next_u64(r->s); }

vs_rng vs_rng_split(vs_rng *r)
{
    vs_rng child;
    vs_rng_seed(&child, vs_rng_u64(r) ^ 0x5851f42d4c957f2dULL);
    return child;
}

uint64_t vs_rng_below(vs_rng *r, uint64_t n)
{
    /* Rejection keeps the draw exactly uniform. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do x = vs_rng_u64(r);
    while (x >= limit);
    return x % n;
}

double vs_rng_uniform(vs_rng *r) { return (double)(vs_rng_u64(r) >> 11) * 0x1.0p-53; }

/* A float of the top 24 bits of one draw: u in [0, 1). */
static inline float uniformf_of(uint64_t x) { return (float)(x >> 40) * 0x1.0p-24f; }

float vs_rng_uniformf(vs_rng *r) { return uniformf_of(vs_rng_u64(r)); }

void vs_rng_fill_uniformf(vs_rng *r, float *out, int64_t n, float lo, float hi)
{
    uint64_t s[4] = {r->s[0], r->s[1], r->s[2], r->s[3]}; /* the state in registers, not behind r */
    for (int64_t i = 0; i < n; i++) out[i] = lo + (hi - lo) * uniformf_of(next_u64(s));
    for (int i = 0; i < 4; i++) r->s[i] = s[i];
}

/* Box-Muller's value for the draws u1 in (0, 1] and u2 in [0, 1), through libm. */
static double box_muller(double u1, double u2) { return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2); }

double vs_rng_normal(vs_rng *r)
{
    double u1 = 1.0 - vs_rng_uniform(r); /* (0, 1]: log is finite */
    double u2 = vs_rng_uniform(r);
    return box_muller(u1, u2);
}

/* ---- bulk normals ----------------------------------------------------------------------------------
 * vs_rng_fill_normalf gives exactly the floats of a vs_rng_normal loop.  libm's log and cos are
 * scalar calls (cos about 17 ns each here: most of a VAE step's noise), so a block of draws first
 * gets Box-Muller from the series below, vectorised in double: within 2^-50 of libm's z over 2e7
 * draws (each side a few ulps from the true value).  Two doubles that close round to the same
 * float unless a float rounding boundary lies between them; so where z lies within 2^-40 |z| of
 * one (z (1 - 2^-40) and z (1 + 2^-40) round to another float than z: about one draw in 45000) or
 * z is 0, the element is recomputed through libm.  Every float is then libm's. */

#define NORMAL_BLOCK 256
#define NORMAL_GUARD 0x1p-40

/* Series coefficients, highest power first: 1/23, 1/21, ..., 1/3 (atanh t / t - 1 in t^2), and sin r
 * and cos r in r^2 from the r^3 and r^4 terms on, to r^17/17! and r^18/18!. */
static const double log_series[11] = {1.0 / 23, 1.0 / 21, 1.0 / 19, 1.0 / 17, 1.0 / 15, 1.0 / 13,
                                      1.0 / 11, 1.0 / 9,  1.0 / 7,  1.0 / 5,  1.0 / 3};
static const double sin_series[8] = {1.0 / 355687428096000.0, -1.0 / 1307674368000.0, 1.0 / 6227020800.0, -1.0 / 39916800.0,
                                     1.0 / 362880.0,          -1.0 / 5040.0,          1.0 / 120.0,        -1.0 / 6.0};
static const double cos_series[8] = {-1.0 / 6402373705728000.0, 1.0 / 20922789888000.0, -1.0 / 87178291200.0, 1.0 / 479001600.0,
                                     -1.0 / 3628800.0,          1.0 / 40320.0,          -1.0 / 720.0,         1.0 / 24.0};

/* c[0] w^(n-1) + ... + c[n-1] by Horner's rule. */
static inline double horner(double w, const double *c, int n)
{
    double p = c[0];
#pragma GCC unroll 16 /* unrolled, the caller's loop stays vectorisable */
    for (int i = 1; i < n; i++) p = c[i] + w * p;
    return p;
}

/* log u for u in (0, 1]: u = 2^e m with m in [sqrt(1/2), sqrt(2)); log m = 2 atanh t with
 * t = (m - 1) / (m + 1), |t| < 0.172, by its series t + t^3/3 + ... + t^23/23 (the next term is
 * below 2^-60 t); e ln 2 is added in two parts, e LN2_HI exact.  Branch-free for the vectoriser:
 * the exponent is read from the bits and turned into a double through 2^52 + e. */
static inline double log_unit(double u)
{
    const double ln2_hi = 0x1.62e42fee00000p-1, ln2_lo = 0x1.a39ef35793c76p-33, sqrt2 = 0x1.6a09e667f3bcdp+0;
    uint64_t b, eb, mb;
    memcpy(&b, &u, sizeof b);
    mb = (b & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL; /* m in [1, 2) */
    eb = (b >> 52) | 0x4330000000000000ULL;                     /* 2^52 + biased exponent */
    double m, e;
    memcpy(&m, &mb, sizeof m);
    const uint64_t big = m > sqrt2;
    mb -= big << 52; /* m / 2: the selects are on integers, which GCC if-converts (not FP arithmetic) */
    eb += big;
    memcpy(&m, &mb, sizeof m);
    memcpy(&e, &eb, sizeof e);
    e = e - (0x1p52 + 1023.0);
    const double t = (m - 1.0) / (m + 1.0), w = t * t;
    const double p = horner(w, log_series, 11);
    const double log_m = 2.0 * (t + t * (w * p));
    return e * ln2_hi + (log_m + e * ln2_lo);
}

/* cos x for x in [0, 2 pi]: x = k pi/2 + r with k = round(2x / pi) in 0..4 and |r| <= pi/4 (just
 * over at a rounding tie), pi/2 in three parts (33, 33 and 53 bits: k P1 and k P2 are exact and
 * each subtraction cancels exactly where it cancels much); then cos r, -sin r, -cos r or sin r by
 * their Taylor series to r^18 and r^17 (the next terms are below 2^-60 of the result). */
static inline double cos_0_2pi(double x)
{
    const double p1 = 0x1.921fb54400000p+0, p2 = 0x1.0b4611a600000p-34, p3 = 0x1.3198a2e037073p-69;
    const double k = (x * 0x1.45f306dc9c883p-1 + 0x1.8p52) - 0x1.8p52; /* round to nearest */
    double r = x - k * p1;
    r = r - k * p2;
    r = r - k * p3;
    const double w = r * r;
    const double sin_r = r + r * (w * horner(w, sin_series, 8)), c = horner(w, cos_series, 8);
    const double cos_r = (1.0 - 0.5 * w) + (w * w) * c;
    /* the quadrant's choice and sign on the bits: GCC if-converts integer selects, not FP ones */
    const uint64_t odd = (uint64_t)0 - (uint64_t)((k == 1.0) | (k == 3.0)), neg = (uint64_t)((k == 1.0) | (k == 2.0)) << 63;
    uint64_t sb, cb;
    memcpy(&sb, &sin_r, sizeof sb);
    memcpy(&cb, &cos_r, sizeof cb);
    const uint64_t vb = ((sb & odd) | (cb & ~odd)) ^ neg;
    double v;
    memcpy(&v, &vb, sizeof v);
    return v;
}

/* out[i] = mean + std (float) z_i for z_i = Box-Muller of (u1[i], u2[i]) by the polynomials, and
 * redo[i] = 1 where z_i is too close to a float rounding boundary (or 0) to be sure of libm's float. */
VS_VECTOR_CLONES512 static void normal_block(const double *restrict u1, const double *restrict u2, float *restrict out,
                                             unsigned char *restrict redo, int64_t n, float mean, float std)
{
    for (int64_t i = 0; i < n; i++) {
        const double z = sqrt(-2.0 * log_unit(u1[i])) * cos_0_2pi(6.283185307179586 * u2[i]);
        const float f = (float)z, lo = (float)(z - z * NORMAL_GUARD), hi = (float)(z + z * NORMAL_GUARD);
        redo[i] = (unsigned char)((z == 0.0) | (lo != f) | (hi != f));
        out[i] = mean + std * f;
    }
}

void vs_rng_fill_normalf(vs_rng *r, float *out, int64_t n, float mean, float std)
{
    uint64_t s[4] = {r->s[0], r->s[1], r->s[2], r->s[3]};
    double u1[NORMAL_BLOCK], u2[NORMAL_BLOCK];
    unsigned char redo[NORMAL_BLOCK];
    for (int64_t b = 0; b < n; b += NORMAL_BLOCK) {
        const int64_t m = n - b < NORMAL_BLOCK ? n - b : NORMAL_BLOCK;
        for (int64_t i = 0; i < m; i++) {
            u1[i] = 1.0 - (double)(next_u64(s) >> 11) * 0x1.0p-53; /* vs_rng_normal's draws, in its order */
            u2[i] = (double)(next_u64(s) >> 11) * 0x1.0p-53;
        }
        normal_block(u1, u2, out + b, redo, m, mean, std);
        for (int64_t i = 0; i < m; i++)
            if (redo[i]) out[b + i] = mean + std * (float)box_muller(u1[i], u2[i]);
    }
    for (int i = 0; i < 4; i++) r->s[i] = s[i];
}

void vs_rng_shuffle(vs_rng *r, size_t *idx, size_t n)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)vs_rng_below(r, i);
        size_t t = idx[i - 1];
        idx[i - 1] = idx[j];
        idx[j] = t;
    }
}
