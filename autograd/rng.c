/* rng.c - xoshiro256** (Blackman & Vigna) seeded with splitmix64. */
#include "versus/rng.h"
#include "autograd/kernels.h"

#include <math.h>

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

double vs_rng_normal(vs_rng *r)
{
    double u1 = 1.0 - vs_rng_uniform(r); /* (0, 1]: log is finite */
    double u2 = vs_rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
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
